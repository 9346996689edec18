import Foundation
import RoomTesting
import Testing

/// What a server learns from a person who opens a link to it: never their long-term guest key, and nothing that
/// another server could use or match (issue 31, finding 1).
@Suite(.ownThread) struct GuestKeyTests {
    /// base64url without padding, as the client writes keys.
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Something that looks like an invite to the client (it sends its guest key only with one); no server
    /// signed it, and none needs to: the fake servers only record.
    static let invite =
        base64URL(Array(#"{"alg":"HS256","typ":"JWT","kid":"AAAAAAAAAAAA"}"#.utf8)) + "."
        + base64URL(Array(#"{"use":"invite","role":"moderator","room":"r","nbf":0,"exp":9999999999}"#.utf8)) + "."
        + base64URL([UInt8](repeating: 7, count: 32))

    /// A state folder whose guest key is `key`.
    static func stateFolder(key: [UInt8]) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-guest-\(UUID())").path
        try FileManager.default.createDirectory(
            atPath: folder + "/clubroom", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let hex = key.map { String(format: "%02x", $0) }.joined()
        _ = FileManager.default.createFile(
            atPath: folder + "/clubroom/guest-key", contents: Data((hex + "\n").utf8),
            attributes: [.posixPermissions: 0o600])
        return folder
    }

    @Test(.timeLimit(.minutes(2))) func aServerSeesNeitherTheKeyNorWhatAnotherServerSees() throws {
        let key = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        let state = try Self.stateFolder(key: key)
        defer { try? FileManager.default.removeItem(atPath: state) }
        let first = try RecordingListener()
        let second = try RecordingListener()
        for server in [first, second] {
            let result = try ChildProcess([
                "XDG_STATE_HOME=\(state)", try clubroomBinary().path, "join",
                "ws://127.0.0.1:\(server.port)/rooms/r#invite=\(Self.invite)", "--plain", "--output", "null",
            ]).finish(seconds: 30)
            #expect(result.status == 1)
        }
        let seenByFirst = first.values(of: "X-Clubroom-Guest")
        let seenBySecond = second.values(of: "X-Clubroom-Guest")
        // Each server was shown a key of the usual form (43 base64url characters)...
        #expect(!seenByFirst.isEmpty && !seenBySecond.isEmpty)
        #expect((seenByFirst + seenBySecond).allSatisfy { $0.utf8.count == 43 })
        // ...but not the key itself, and not the same one: neither can act as the person at the other, nor can
        // the two tell that their visitors are one person.
        #expect(!(seenByFirst + seenBySecond).contains(Self.base64URL(key)))
        #expect(Set(seenByFirst).isDisjoint(with: Set(seenBySecond)))
        // The same server is shown the same key each time: the person keeps their identity there.
        #expect(Set(seenByFirst).count == 1)
    }

    @Test func noGuestKeyGoesOverUnencryptedWebSocketsToAnotherMachine() throws {
        let state = try Self.stateFolder(key: [UInt8](repeating: 1, count: 32))
        defer { try? FileManager.default.removeItem(atPath: state) }
        let result = try ChildProcess([
            "XDG_STATE_HOME=\(state)", try clubroomBinary().path, "join",
            "ws://192.0.2.1:7480/rooms/r#invite=\(Self.invite)", "--plain", "--output", "null",
        ]).finish(seconds: 30)
        #expect(result.status == 1)
        #expect(
            result.standardError
                == "clubroom join: This link is ws:// to another machine (192.0.2.1): joining with it would send "
                + "who you are unencrypted, so Clubroom does not. Ask the host for a wss:// link.\n")
    }
}
