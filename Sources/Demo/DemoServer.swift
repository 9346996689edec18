import ClubroomResources
import Crypto
import Foundation
import RoomCore
import RoomProtocol
import RoomServer
import RoomTokens

/// The demo's own room server: in this process, on a free loopback port, with a throwaway secret and data
/// directory that `shutdown()` removes.
public final class DemoServer: Sendable {
    /// The room everyone joins.
    public let room: String
    /// `ws://127.0.0.1:PORT/rooms/ROOM`.
    public let url: String
    /// The throwaway directory holding the database and the secret.
    public let directory: String
    /// The secret file tokens are signed with (inside `directory`).
    public let secretFile: String
    private let runtime: RoomServerRuntime
    private let issuer: TokenIssuer

    /// Creates a fresh directory under the system's temporary folder and starts serving. The server logs at
    /// `logLevel` and above to `logDescriptor`.
    public init(room: String, logDescriptor: Int32, logLevel: LogLevel = .warning) throws(DemoError) {
        let template = (NSTemporaryDirectory() as NSString).appendingPathComponent("clubroom-demo-XXXXXX")
        var path = Array(template.utf8CString)
        guard let made = mkdtemp(&path) else {
            throw DemoError(place: "data directory \(template)", problem: String(cString: strerror(errno)))
        }
        let directory = String(cString: made)
        self.directory = directory
        self.room = room
        secretFile = directory + "/secret"
        do {
            let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
            let configuration = ServerConfiguration(
                host: "127.0.0.1", port: 0, dataDirectory: directory + "/data", secretFile: secretFile, roles: roles,
                // The demo's bots talk more than a person types; the limit protects real servers, not this one.
                rateBurst: 200, ratePerSecond: 100, media: MediaConfiguration(bindHost: "127.0.0.1", port: 0))
            runtime = try RoomServerRuntime(
                configuration: configuration, log: ServerLog(minimum: logLevel, descriptor: logDescriptor))
            issuer = TokenIssuer(secret: try SecretFile.load(at: secretFile))
        } catch let error as RoleTableError {
            Self.remove(directory)
            throw DemoError(place: "role table", problem: error.description)
        } catch let error as ServerStartError {
            Self.remove(directory)
            throw DemoError(place: "server", problem: error.description)
        } catch {
            Self.remove(directory)
            throw DemoError(place: "secret file", problem: "\(error)")
        }
        url = "ws://127.0.0.1:\(runtime.port)/rooms/\(room)"
    }

    /// A token for `member` in the demo room, valid for a day.
    public func token(for member: DemoCast.Member) throws(DemoError) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        let claims = TokenClaims(
            subject: member.identity, name: member.name, room: room, role: member.role, expiresAt: now + 86_400,
            notBefore: now - 60, issuedAt: now)
        do {
            return try issuer.issue(claims)
        } catch {
            throw DemoError(place: "token for \(member.identity)", problem: "\(error)")
        }
    }

    /// Stops serving and removes the directory.
    public func shutdown() {
        runtime.shutdown()
        Self.remove(directory)
    }

    private static func remove(_ directory: String) {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
