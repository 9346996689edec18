import Foundation
import RoomTesting
import Testing

/// Links and tokens that need not be on the command line, where every user of the machine reads them in `ps`
/// (issue 31, finding 10): each way in reaches the server with the secret, and none puts it in the arguments.
@Suite(.ownThread) struct SecretsOutOfPsTests {
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-ps-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A room token's shape: what the client sends as it is (the fake server never checks it).
    static let token = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbmEifQ.c2VjcmV0LXNpZ25hdHVyZQ"

    @Test(.timeLimit(.minutes(2))) func joinReadsTheLinkFromStdinOrAFile() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try RecordingListener()
        let file = folder + "/link"
        _ = FileManager.default.createFile(
            atPath: file, contents: Data("ws://127.0.0.1:\(server.port)/rooms/r\n".utf8))
        let binary = try clubroomBinary().path
        let commands = [
            // The link on stdin's first line (`-`), then from a file.
            ["/bin/sh", "-c", "exec \"$0\" join - --plain --output null < \"$1\"", binary, file],
            [binary, "join", "--link-file", file, "--plain", "--output", "null"],
        ]
        for command in commands {
            let child = try ChildProcess(["CLUBROOM_TOKEN=\(Self.token)"] + command)
            let arguments = try String(
                contentsOfFile: "/proc/\(child.process.processIdentifier)/cmdline", encoding: .utf8)
            #expect(!arguments.contains("127.0.0.1:\(server.port)"))
            _ = try child.finish(seconds: 30)
        }
        #expect(server.values(of: "Authorization") == ["Bearer \(Self.token)", "Bearer \(Self.token)"])
        #expect(server.received.allSatisfy { $0.hasPrefix("GET /rooms/r ") })
    }

    @Test(.timeLimit(.minutes(2))) func theBotTakesItsTokenFromAFileOrTheEnvironment() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try RecordingListener()
        let file = folder + "/token"
        _ = FileManager.default.createFile(atPath: file, contents: Data((Self.token + "\n").utf8))
        let url = "ws://127.0.0.1:\(server.port)/rooms/r"
        let binary = try clubroomBinary().path
        _ = try ChildProcess([binary, "bot", url, "--token-file", file]).finish(seconds: 30)
        _ = try ChildProcess(["CLUBROOM_TOKEN=\(Self.token)", binary, "bot", url]).finish(seconds: 30)
        #expect(server.values(of: "Authorization").prefix(1) == ["Bearer \(Self.token)"])
        #expect(server.values(of: "Authorization").suffix(1) == ["Bearer \(Self.token)"])
        let empty = try ChildProcess(["CLUBROOM_TOKEN= ", binary, "bot", url]).finish(seconds: 30)
        #expect(empty.status == 1)
        #expect(empty.standardError == "clubroom bot: the token is empty; give the one the room's host sent you\n")
    }
}
