import Foundation
import RoomTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A plain server on a free loopback port with its own data folder, for the join command's error wording.
private final class PlainServer {
    let folder: String
    let port: Int
    let process: ChildProcess

    init() throws {
        folder =
            FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-words-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        port = try freeLoopbackPort()
        process = try ChildProcess(
            executable: try clubroomBinary(), arguments: ["serve", "--listen", "127.0.0.1:\(port)", "--data", folder])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !Self.answers(port) { usleep(20_000) }
    }

    private static func answers(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    func join(_ arguments: [String], scheme: String = "ws", path: String = "/rooms/r") throws -> ProcessResult {
        try runClubroom(
            ["join", "\(scheme)://127.0.0.1:\(port)\(path)", "--plain", "--output", "null", "--input", "silence"]
                + arguments)
    }

    func stop() {
        process.kill()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

@Suite(.serialized) struct JoinErrorWordingTests {
    /// One sentence of what happened and one of what to do: no close code, no advice said twice.
    @Test func aTokenTheServerCannotReadIsSaidInWords() throws {
        let server = try PlainServer()
        defer { server.stop() }
        let result = try server.join(["--token", "not-a-token"])
        #expect(result.status == 1)
        #expect(
            result.standardError
                == "clubroom join: The token cannot be read. Ask the host for a new one.\n")
        #expect(!result.standardOutput.contains("4001"))
    }

    @Test func wssToAPlainServerSaysToUseWs() throws {
        let server = try PlainServer()
        defer { server.stop() }
        let result = try server.join(["--token", "t"], scheme: "wss")
        #expect(result.status == 1)
        #expect(
            result.standardError
                == "clubroom join: The server at this address does not speak TLS. If it is a plain server, use "
                + "ws:// instead of wss://.\n")
    }

    @Test func aSlashAtTheEndOfTheAddressStillJoins() throws {
        let server = try PlainServer()
        defer { server.stop() }
        let result = try server.join(
            ["--secret-file", server.folder + "/secret", "--identity", "ana", "--role", "host"], path: "/rooms/r/")
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("You joined r as ana (host)."), "\(result.standardOutput)")
        #expect(result.standardOutput.hasSuffix("You left the room.\n"))
    }
}
