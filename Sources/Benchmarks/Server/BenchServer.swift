import ClubroomResources
import Crypto
import Foundation
import RoomCore
import RoomProtocol
import RoomServer
import RoomTokens

/// Why a benchmark's server could not start or a token could not be made.
public struct BenchServerError: Error, CustomStringConvertible {
    public var description: String
}

/// A room server in this process, on free loopback ports, for the benchmarks' clients: the real
/// `RoomServerRuntime` (rooms, roles, and with media its forwarder and SRTP), with a throwaway data directory
/// and secret that `shutdown()` removes, and tokens for anyone.
public final class BenchServer: Sendable {
    /// `ws://127.0.0.1:PORT/rooms/ROOM`.
    public let url: String
    /// The room the tokens are for.
    public let room: String
    /// The WebSocket port.
    public let port: Int
    private let directory: String
    private let runtime: RoomServerRuntime
    private let issuer: TokenIssuer

    /// Starts serving `room`; `media` adds the media forwarder on a loopback port. Bench clients talk more than a
    /// person types, so the request rate limit is out of their way.
    public init(
        room: String, media: Bool, maxPeersPerRoom: Int = RoomAuthority.defaultMaxPeers, logLevel: LogLevel = .error
    ) throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "clubroom-bench-\(UUID().uuidString)"
            ).path
        self.room = room
        let secretFile = directory + "/secret"
        do {
            let configuration = ServerConfiguration(
                host: "127.0.0.1", port: 0, dataDirectory: directory + "/data", secretFile: secretFile,
                roles: try RoleTable.load(contentsOf: ClubroomResources.rolesURL), maxPeersPerRoom: maxPeersPerRoom,
                rateBurst: 1_000, ratePerSecond: 1_000,
                media: media ? MediaConfiguration(bindHost: "127.0.0.1", port: 0) : nil)
            runtime = try RoomServerRuntime(configuration: configuration, log: ServerLog(minimum: logLevel))
            issuer = TokenIssuer(secret: try SecretFile.load(at: secretFile))
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw BenchServerError(description: "the room server could not start: \(error)")
        }
        port = runtime.port
        url = "ws://127.0.0.1:\(runtime.port)/rooms/\(room)"
    }

    /// A token for `identity` with `role` in the room, valid for an hour.
    public func token(_ identity: String, role: String, name: String? = nil) throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        do {
            return try issuer.issue(
                TokenClaims(
                    subject: identity, name: name ?? identity, room: room, role: role, expiresAt: now + 3600,
                    notBefore: now - 60))
        } catch {
            throw BenchServerError(description: "no token for \(identity): \(error)")
        }
    }

    /// Stops serving and removes the directory.
    public func shutdown() {
        runtime.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
