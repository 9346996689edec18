import Foundation
import Glibc
import RoomTesting
import Testing

/// What the server and `clubroom invite` say, or refuse, when secrets would travel or sit where others can read
/// them: `ws://` past this machine, a Redis password file or a TLS key others may read, a link typed by mistake.
@Suite(.ownThread) struct PlainTextWarningTests {
    /// A secret of the test's own, for `clubroom invite`.
    func secretFile(in directory: TemporaryDirectory) -> String {
        let path = directory.file("secret")
        let hex = String(repeating: "ab", count: 32)
        _ = FileManager.default.createFile(
            atPath: path, contents: Data((hex + "\n").utf8), attributes: [.posixPermissions: 0o600])
        return path
    }

    @Test func anInviteToPlainWebSocketsPastThisMachineIsWarnedOf() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let secret = secretFile(in: directory)
        let far = try runClubroom([
            "invite", "ws://rooms.example.org:7480", "--room", "jazz", "--role", "audience", "--secret-file", secret,
        ])
        #expect(far.status == 0)
        #expect(far.standardOutput.hasPrefix("ws://rooms.example.org:7480/rooms/jazz#invite="))
        #expect(far.standardError.contains("clubroom invite: warning: ws://rooms.example.org:7480 has no TLS"))
        for quiet in ["ws://127.0.0.1:7480", "wss://rooms.example.org"] {
            let result = try runClubroom([
                "invite", quiet, "--room", "jazz", "--role", "audience", "--secret-file", secret,
            ])
            #expect(result.status == 0)
            #expect(result.standardError.isEmpty, "\(quiet): \(result.standardError)")
        }
    }

    @Test func aLinkTypedInPlaceOfACommandIsNotRepeatedWithItsInvite() throws {
        let result = try runClubroom(["wss://rooms.example.org/rooms/jazz#invite=SECRET-INVITE"])
        #expect(result.status == 2)
        #expect(result.firstErrorLine == "clubroom: unknown command 'wss://rooms.example.org/rooms/jazz#…'")
        #expect(!result.standardError.contains("SECRET-INVITE"))
    }

    @Test func aRedisPasswordFileOthersMayReadStopsTheStart() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let password = directory.file("redis-password")
        _ = FileManager.default.createFile(
            atPath: password, contents: Data("hunter2\n".utf8), attributes: [.posixPermissions: 0o644])
        let result = try runClubroom([
            "serve", "--listen", "127.0.0.1:0", "--data", directory.file("data"), "--cluster", "redis://127.0.0.1:1",
            "--node", "a", "--cluster-password-file", password,
        ])
        #expect(result.status != 0)
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.contains("group or other users may read it (mode 644)") == true, "\(lines)")
        #expect(!result.standardError.contains("hunter2"))
    }

    /// A server on every address without TLS says so; one with a TLS key others may read says that.
    @Test func plainWebSocketsOnEveryAddressAndAReadableTLSKeyAreWarnedOf() throws {
        let (certificate, key, folder) = try makeSelfSignedCertificate()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(chmod(key, 0o644) == 0)
        func warnings(_ arguments: [String]) throws -> [String] {
            let process = Process()
            process.executableURL = try clubroomBinary()
            process.arguments =
                ["serve", "--data", folder + "/data-\(UUID().uuidString)", "--media", "127.0.0.1:0"] + arguments
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            let log = LineCollector(errors.fileHandleForReading)
            try process.run()
            defer {
                process.terminate()
                process.waitUntilExit()
            }
            guard log.wait(timeout: 15, { $0.contains("listening on") }) != nil else {
                throw TestFailure(description: "the server did not start: \(log.all)")
            }
            return log.all.filter { $0.contains(" WARN ") }
        }
        let open = try warnings(["--listen", "0.0.0.0:0"])
        #expect(open.contains { $0.contains("serving ws:// (no TLS) on 0.0.0.0") }, "\(open)")
        let loopback = try warnings(["--listen", "127.0.0.1:0"])
        #expect(!loopback.contains { $0.contains("serving ws://") }, "\(loopback)")
        let tls = try warnings(["--listen", "127.0.0.1:0", "--tls-cert", certificate, "--tls-key", key])
        #expect(tls.contains { $0.contains("TLS key \(key) can be read by group or other users (mode 644)") }, "\(tls)")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
}
