import Platform
import RoomCore
import RoomTransport

/// Everything `clubroom serve` is configured with.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port; `RoomServerRuntime.port` tells which.
    public var port: Int
    /// The folder holding the SQLite database.
    public var dataDirectory: String
    /// The file holding the token secret; created with mode 0600 when missing.
    public var secretFile: String
    public var tls: TLSServerConfiguration?
    public var roles: RoleTable
    public var maxPeersPerRoom: Int
    /// The burst of requests a connection may send at once.
    public var rateBurst: Double
    /// The sustained requests per second a connection may send.
    public var ratePerSecond: Double
    public var pingInterval: Duration
    public var idleTimeout: Duration
    /// Where media is received over UDP; `nil` serves rooms without audio.
    public var media: MediaConfiguration?
    /// The most lobbies watching the list of live rooms at once.
    public var maxLobbyWatchers: Int = 10_000
    /// How fast invite holders may come in, per source address and per link.
    public var admissionLimits = AdmissionLimits()
    /// The program the server runs to record a room, and the words it gets before the recorder's own arguments;
    /// nil runs this executable's `record`.
    public var recorderCommand: [String]? = nil
    /// The destinations rooms may stream to (`serve --stream NAME=URL`), run with the same program.
    public var streams: [ServerStream] = []
    /// Who may open a room from the lobby (`serve --open-rooms`).
    public var openRooms = OpenRoomsPolicy.hosts
    /// How long a room whose last host left, with no moderator to take over, goes on before it ends (ms).
    public var hostlessGrace: Timestamp = RoomAuthority.hostlessGrace

    public init(
        host: String = "127.0.0.1", port: Int = 7480, dataDirectory: String, secretFile: String,
        tls: TLSServerConfiguration? = nil, roles: RoleTable, maxPeersPerRoom: Int = RoomAuthority.defaultMaxPeers,
        rateBurst: Double = 20, ratePerSecond: Double = 10, pingInterval: Duration = .seconds(5),
        idleTimeout: Duration = .seconds(15), media: MediaConfiguration? = nil
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.secretFile = secretFile
        self.tls = tls
        self.roles = roles
        self.maxPeersPerRoom = maxPeersPerRoom
        self.rateBurst = rateBurst
        self.ratePerSecond = ratePerSecond
        self.pingInterval = pingInterval
        self.idleTimeout = idleTimeout
        self.media = media
    }
}

/// Why the server could not start: which part, and what went wrong.
public typealias ServerStartError = PlacedError
