import Foundation
import Testing

@testable import Crypto

/// A fresh folder under the system's temporary folder, removed by `remove()`.
struct TemporaryFolder {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

func permissions(of path: String) throws -> Int {
    try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)!.intValue
}

func write(_ text: String, to path: String, mode: Int) throws {
    _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
    try FileManager.default.setAttributes([.posixPermissions: NSNumber(value: mode)], ofItemAtPath: path)
}

func secretFileProblem(_ path: String) -> SecretFileError.Problem? {
    do {
        _ = try SecretFile.loadOrCreate(at: path)
        return nil
    } catch {
        return error.problem
    }
}

@Suite struct SecretFileTests {
    @Test func createsA0600FileWithA32ByteHexSecretAndReusesIt() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/state/secret"
        let created = try SecretFile.loadOrCreate(at: path)
        #expect(created.bytes.count == 32)
        #expect(try permissions(of: path) == 0o600)
        #expect(try permissions(of: folder.path + "/state") == 0o700)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == SecretFile.encodeHex(created.bytes) + "\n")
        #expect(text.count == 65)
        let reused = try SecretFile.loadOrCreate(at: path)
        #expect(reused == created)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/state") == ["secret"])
    }

    @Test func refusesAFileGroupOrOthersCanRead() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/secret"
        try write(String(repeating: "ab", count: 32), to: path, mode: 0o644)
        #expect(secretFileProblem(path) == .permissionsTooOpen(mode: 0o644))
        try FileManager.default.setAttributes([.posixPermissions: NSNumber(value: 0o640)], ofItemAtPath: path)
        #expect(secretFileProblem(path) == .permissionsTooOpen(mode: 0o640))
        try FileManager.default.setAttributes([.posixPermissions: NSNumber(value: 0o400)], ofItemAtPath: path)
        #expect(try SecretFile.loadOrCreate(at: path).bytes == [UInt8](repeating: 0xAB, count: 32))
    }

    @Test func refusesAShortSecret() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/secret"
        try write(String(repeating: "ab", count: 31) + "\n", to: path, mode: 0o600)
        #expect(secretFileProblem(path) == .tooShort(bytes: 31))
    }

    @Test func refusesTextThatIsNotHex() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/secret"
        for text in ["", "\n", String(repeating: "zz", count: 32), String(repeating: "a", count: 65)] {
            try? FileManager.default.removeItem(atPath: path)
            try write(text, to: path, mode: 0o600)
            #expect(secretFileProblem(path) == .notHex, "\(text)")
        }
    }

    @Test func acceptsUpperCaseHexWithSurroundingWhitespace() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/secret"
        try write("  " + String(repeating: "0F", count: 40) + "\r\n", to: path, mode: 0o600)
        #expect(try SecretFile.loadOrCreate(at: path).bytes == [UInt8](repeating: 0x0F, count: 40))
    }

    @Test func refusesAFolder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try FileManager.default.setAttributes([.posixPermissions: NSNumber(value: 0o700)], ofItemAtPath: folder.path)
        #expect(secretFileProblem(folder.path) == .notARegularFile)
    }

    @Test func refusesASymbolicLink() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let target = folder.path + "/real"
        try write(String(repeating: "ab", count: 32), to: target, mode: 0o600)
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/link", withDestinationPath: target)
        #expect(secretFileProblem(folder.path + "/link") == .notARegularFile)
    }

    @Test func errorNamesTheFileAndTheFix() {
        let error = SecretFileError(path: "/srv/secret", problem: .permissionsTooOpen(mode: 0o644))
        #expect(
            error.description
                == "secret file /srv/secret: permissions 644 let others read it; run chmod 600 /srv/secret")
    }

    @Test func secretIsNeverPrinted() {
        #expect("\(TokenSecret(bytes: [1, 2, 3]))" == "TokenSecret(3 bytes)")
    }
}
