import Arguments
import ClubroomResources
import ClusterServer
import Crypto
import Foundation
import ProcessSignals
import RedisClient
import RoomCore
import RoomServer
import RoomTransport

/// `clubroom serve`: the room server.
enum ServeCommand: ClubroomCommand {
    static let declaration = Command(
        name: "serve", abstract: "Run a room server.",
        discussion: """
            Serves rooms over WebSocket at ws://HOST:PORT/rooms/ROOM and the lobby's list of live rooms at \
            ws://HOST:PORT/rooms (wss:// with --tls-cert and --tls-key). People join with a link or token \
            signed by the server's secret; see 'clubroom invite' and 'clubroom token'. Rooms, the moderation \
            log and recent chat are kept in an SQLite database in the data directory. Logs go to stderr. \
            docs/deploy.md says how to run it for people elsewhere (systemd, TLS, a reverse proxy). With \
            --cluster and --node, the server is one node of a cluster sharing its rooms through Redis: people \
            join a room through any node and are in the same room, and every node's lobby lists it (see \
            docs/cluster.md); the nodes share one --secret-file.
            """,
        options: [
            listen.option, data.option, secretFile.option, tlsCertificate.option, tlsKey.option, roles.option,
            media.option, publicAddress.option, maxPeers.option, inviteBurst.option, inviteRate.option,
            linkLiveMax.option, trustedProxy.option, cluster.option, clusterPasswordFile.option, node.option,
            relay.option, clusterSecretFile.option, recorder.option, stream.option, streams.option, openRooms.option,
            hostlessGrace.option,
        ])

    static let listen = TypedOption.endpoint(
        "listen", placeholder: "HOST:PORT", default: Endpoint(host: "127.0.0.1", port: 7480),
        help: "Address to listen on; port 0 picks a free port.")
    static let data = TypedOption.path(
        "data", placeholder: "DIR", defaultDescription: "$XDG_DATA_HOME/clubroom", help: "Directory for the database.")
    static let secretFile = TypedOption.path(
        "secret-file", placeholder: "FILE", defaultDescription: "DIR/secret",
        help: "File holding the secret that signs tokens; created with mode 0600 when missing.")
    static let tlsCertificate = TypedOption.path(
        "tls-cert", placeholder: "FILE", help: "PEM certificate chain for wss://.")
    static let tlsKey = TypedOption.path("tls-key", placeholder: "FILE", help: "PEM private key for wss://.")
    static let roles = TypedOption.path(
        "roles", placeholder: "FILE", defaultDescription: "the built-in table",
        help: "Role table in JSON, in the format of Resources/roles.json.")
    static let media = TypedOption.endpoint(
        "media", placeholder: "HOST:PORT", defaultDescription: "the --listen host, port 0",
        help: "UDP address for audio (SRTP); port 0 picks a free port. Clients learn it when they join.")
    static let publicAddress = TypedOption.string(
        "public-address", placeholder: "HOST", defaultDescription: "the address each client reached",
        help: "The IPv4 address (or a name for one) clients send audio to.")
    static let maxPeers = TypedOption.integer(
        "max-peers", placeholder: "N", in: 1...1_000_000, default: 10_000, help: "Most people in one room.")
    static let inviteBurst = TypedOption.integer(
        "invite-burst", placeholder: "N", in: 1...1_000_000, default: 20,
        help: "Invite holders one address may bring in at once (see docs/tokens.md, limits at the door).")
    static let inviteRate = TypedOption.integer(
        "invite-rate", placeholder: "N", in: 0...1_000_000, default: 30,
        help: "Invite holders one address may bring in per minute after its burst.")
    static let linkLiveMax = TypedOption.integer(
        "link-live-max", placeholder: "N", in: 1...1_000_000, default: 200,
        help: "Most people one invite link may have in rooms at once.")
    static let trustedProxy = TypedOption.string(
        "trusted-proxy", placeholder: "ADDRESS[,ADDRESS...]",
        help: "Reverse proxies whose X-Forwarded-For names the real address of who connects.")
    static let cluster = TypedOption.url(
        "cluster", placeholder: "redis://HOST:PORT", schemes: ["redis"],
        help:
            "Redis of the cluster this server is a node of; needs --node. A login goes in the URL "
            + "(redis://USER:PASSWORD@HOST:PORT) or, kept out of the process list, in --cluster-password-file.")
    static let clusterPasswordFile = TypedOption.path(
        "cluster-password-file", placeholder: "FILE",
        help: "A file whose first line is the password for Redis (the URL's user, if any, logs in with it).")
    static let node = TypedOption.string(
        "node", placeholder: "NAME",
        help: "This node's name in the cluster, unique among the running nodes; needs --cluster.")
    static let relay = TypedOption.endpoint(
        "relay", placeholder: "HOST:PORT", defaultDescription: "the --media host, port 0",
        help: "UDP address where other nodes of the cluster send this node their speakers' audio.")
    static let clusterSecretFile = TypedOption.path(
        "cluster-secret-file", placeholder: "FILE", defaultDescription: "the --secret-file",
        help:
            "The cluster's shared secret, from which the nodes' media relay keys and the seal of what they "
            + "write to Redis derive.")

    static let recorder = TypedOption.path(
        "recorder", placeholder: "PROGRAM", defaultDescription: "this program's record",
        help: "Program the server runs to record a room (start_recording), given --link-file, --out and --started-by.")

    static let stream = TypedOption.string(
        "stream", placeholder: "NAME=URL",
        help:
            "A destination rooms may stream to, by NAME (a-z 0-9 -): icecast://USER:PASSWORD@HOST:PORT/MOUNT.opus, "
            + "rtmp://HOST/APP/KEY or hls:/DIR. Repeatable; the URL never leaves the server.")
    static let streams = TypedOption.path(
        "streams", placeholder: "FILE", help: "A file of NAME=URL lines, as --stream (# comments, blank lines).")

    static let openRooms = TypedOption.choice(
        "open-rooms", placeholder: "WHO", OpenRoomsPolicy.allCases.map(\.rawValue),
        defaultDescription: "hosts; nobody with --cluster",
        help:
            "Who may open a room from the lobby (n): nobody, hosts (people whose lobby link is a host's) or anyone "
            + "with a lobby link.")
    static let hostlessGrace = TypedOption.integer(
        "hostless-grace", placeholder: "SECONDS", in: 1...86_400, default: 120,
        help:
            "How long a room whose last host left, with no moderator to take over, goes on before it ends "
            + "(a server alone; a cluster's rooms wait 120).")

    /// The server's settings, as given on the command line.
    struct Options: Equatable {
        var recorder: String?
        var listen: Endpoint
        var dataDirectory: String?
        var secretFile: String?
        var tlsCertificate: String?
        var tlsKey: String?
        var rolesFile: String?
        var maxPeers: Int
        var media: Endpoint
        var cluster: RedisEndpoint?
        var node: String?
        var relay: Endpoint?
        var clusterSecretFile: String?
        var clusterPasswordFile: String?
        var publicAddress: String?
        var admissionLimits = AdmissionLimits()
        var streams: [StreamList.Entry] = []
        var openRooms = OpenRoomsPolicy.hosts
        /// How long a room left without host or moderator goes on before it ends, in seconds.
        var hostlessGrace = 120

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            hostlessGrace = arguments[ServeCommand.hostlessGrace]
            admissionLimits.addressBurst = Double(arguments[ServeCommand.inviteBurst])
            admissionLimits.addressPerSecond = Double(arguments[ServeCommand.inviteRate]) / 60
            admissionLimits.maxLiveIdentitiesPerLink = arguments[ServeCommand.linkLiveMax]
            admissionLimits.trustedProxies = Set(
                (arguments[ServeCommand.trustedProxy] ?? "").split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                }.filter { !$0.isEmpty })
            maxPeers = arguments[ServeCommand.maxPeers]
            listen = arguments[ServeCommand.listen]
            media = arguments[ServeCommand.media] ?? Endpoint(host: listen.host, port: 0)
            publicAddress = arguments[ServeCommand.publicAddress]
            dataDirectory = arguments[ServeCommand.data]
            secretFile = arguments[ServeCommand.secretFile]
            tlsCertificate = arguments[ServeCommand.tlsCertificate]
            tlsKey = arguments[ServeCommand.tlsKey]
            rolesFile = arguments[ServeCommand.roles]
            if tlsCertificate != nil, tlsKey == nil { throw .needs(option: "--tls-cert", needed: "--tls-key FILE") }
            if tlsKey != nil, tlsCertificate == nil { throw .needs(option: "--tls-key", needed: "--tls-cert FILE") }
            node = arguments[ServeCommand.node]
            relay = arguments[ServeCommand.relay]
            clusterSecretFile = arguments[ServeCommand.clusterSecretFile]
            recorder = arguments[ServeCommand.recorder]
            streams = try Self.readStreams(arguments)
            clusterPasswordFile = arguments[ServeCommand.clusterPasswordFile]
            if let url = arguments[ServeCommand.cluster] {
                cluster = try ServeCommand.clusterEndpoint(url, passwordFile: clusterPasswordFile)
            }
            if cluster != nil, node == nil { throw .needs(option: "--cluster", needed: "--node NAME") }
            let clusterOnly = [
                ("--node", node != nil), ("--relay", relay != nil), ("--cluster-secret-file", clusterSecretFile != nil),
                ("--cluster-password-file", clusterPasswordFile != nil),
            ]
            for (option, given) in clusterOnly where given && cluster == nil {
                throw .needs(option: option, needed: "--cluster redis://HOST:PORT")
            }
            let policy = arguments[ServeCommand.openRooms].flatMap(OpenRoomsPolicy.init(rawValue:))
            if cluster != nil, let policy, policy != .nobody {
                throw .badValue(
                    argument: "--open-rooms", value: policy.rawValue,
                    expected: "nobody with --cluster: a cluster's rooms are not opened from the lobby")
            }
            openRooms = cluster != nil ? .nobody : policy ?? .hosts
        }
    }

}

extension ServeCommand.Options {
    /// The destinations of `--stream` and `--streams`, checked now: a bad one is a usage error naming it.
    static func readStreams(_ arguments: ParsedArguments) throws(ArgumentError) -> [StreamList.Entry] {
        var entries: [StreamList.Entry] = []
        for text in arguments.strings("stream") {
            do throws(StreamListError) {
                entries.append(try StreamList.entry(text))
            } catch {
                let name = text.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
                throw .badValue(argument: "--stream", value: name + "=…", expected: "NAME=URL; \(error.message)")
            }
        }
        if let path = arguments[ServeCommand.streams] {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw .badValue(argument: "--streams", value: path, expected: "a file that can be read")
            }
            do throws(StreamListError) {
                entries += try StreamList.lines(String(decoding: data, as: UTF8.self), source: path)
            } catch {
                throw .badValue(argument: "--streams", value: path, expected: "NAME=URL lines; \(error.message)")
            }
        }
        do throws(StreamListError) {
            return try StreamList.checked(entries)
        } catch {
            throw .badValue(argument: "--stream", value: "…", expected: error.message)
        }
    }
}

extension ServeCommand {
    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let options = try Options(arguments)
        let roles = try RoleTable.load(
            contentsOf: options.rolesFile.map { URL(fileURLWithPath: $0) } ?? ClubroomResources.rolesURL)
        let dataDirectory = options.dataDirectory ?? DefaultPaths.dataDirectory
        var redis = options.cluster
        if let path = options.clusterPasswordFile {
            redis?.password = try readPassword(at: path)
        }
        var clusterSecret: [UInt8]?
        if let path = options.clusterSecretFile {
            do {
                clusterSecret = try SecretFile.load(at: path).bytes
            } catch {
                throw ServerStartError(place: "cluster secret file", problem: error.description)
            }
        }
        var configuration = ServerConfiguration(
            host: options.listen.host, port: Int(options.listen.port), dataDirectory: dataDirectory,
            secretFile: DefaultPaths.secretFile(options.secretFile, dataDirectory: dataDirectory),
            tls: options.tlsCertificate.map {
                TLSServerConfiguration(certificateFile: $0, privateKeyFile: options.tlsKey ?? "")
            },
            roles: roles, maxPeersPerRoom: options.maxPeers,
            media: MediaConfiguration(
                bindHost: options.media.host, port: Int(options.media.port),
                publicAddress: try options.publicAddress.map(resolvePublicAddress)))
        configuration.admissionLimits = options.admissionLimits
        configuration.recorderCommand = options.recorder.map { [$0] }
        configuration.streams = options.streams.map { ServerStream(name: $0.name, url: $0.url) }
        configuration.openRooms = options.openRooms
        configuration.hostlessGrace = Timestamp(options.hostlessGrace) * 1000
        let log = ServerLog()
        if let key = options.tlsKey, let mode = Self.groupOrOtherReadable(key) {
            // Warned of, not refused: keys kept for a group (ssl-cert, 0640) are a common and deliberate setup.
            log.warning(
                "TLS key \(key) can be read by group or other users (mode \(String(mode, radix: 8))): whoever reads it "
                    + "can pose as this server; 'chmod 600 \(key)' unless a group must share it")
        }
        ignoreBrokenPipes()
        raiseOpenFileLimit(log: log)
        // Watched from before the server starts, so a SIGINT or SIGTERM that comes while it starts (a service
        // manager stopping it at once) still closes it cleanly. The first one closes the server; further ones are
        // ignored until it has stopped.
        let (stops, stop) = AsyncStream.makeStream(of: ProcessSignal.self)
        let signals = SignalWatcher(firstOf: [.interrupt, .terminate]) { stop.yield($0) }
        defer { signals.cancel() }
        let cluster = redis.map {
            NodeCluster(
                ClusterSettings(
                    redis: $0, node: options.node ?? "", relayHost: options.relay?.host ?? options.media.host,
                    relayPort: Int(options.relay?.port ?? 0), secret: clusterSecret))
        }
        let server = try RoomServerRuntime(configuration: configuration, log: log, cluster: cluster)
        let scheme = configuration.tls == nil ? "ws" : "wss"
        if configuration.tls == nil, !MediaAddressPolicy.isLoopback(configuration.host) {
            log.warning(
                "serving ws:// (no TLS) on \(configuration.host): tokens, invites, room keys and chat cross the network "
                    + "in clear; give --tls-cert and --tls-key, or listen on 127.0.0.1 behind a reverse proxy with TLS "
                    + "(docs/deploy.md)")
        }
        log.info(
            "make a server link with: clubroom invite \(scheme)://HOST:\(server.port) --secret-file \(configuration.secretFile)"
                + " (HOST as people reach this machine)")
        var signal = ProcessSignal.terminate
        for await received in stops {
            signal = received
            break
        }
        log.info("\(signal.name) received: closing connections")
        server.shutdown()
        log.info("stopped")
        return .success
    }

    /// The IPv4 address `--public-address` names: an address as it is, or the first IPv4 address of a name.
    static func resolvePublicAddress(_ host: String) throws -> String {
        if MediaAddressPolicy.isIPv4(host) {
            guard !MediaAddressPolicy.isWildcard(host) else {
                throw PublicAddressError(
                    text: "--public-address \(host): give the address clients can reach, not 0.0.0.0")
            }
            return host
        }
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &found)
        defer { if let found { freeaddrinfo(found) } }
        guard status == 0, let address = found?.pointee.ai_addr else {
            throw PublicAddressError(
                text:
                    "--public-address \(host): no IPv4 address for that name (\(String(cString: gai_strerror(status))))"
            )
        }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
            var value = inet.pointee.sin_addr
            _ = inet_ntop(AF_INET, &value, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The first line of `--cluster-password-file` (without its line ending): a password for Redis.
    /// The Redis of `--cluster URL`, checked: a URL that is not redis://HOST:PORT is a usage error naming it (its
    /// password hidden), and so is a password given both in the URL and by `--cluster-password-file`.
    static func clusterEndpoint(_ url: String, passwordFile: String?) throws(ArgumentError) -> RedisEndpoint {
        let endpoint: RedisEndpoint
        do throws(RedisEndpointError) {
            endpoint = try RedisEndpoint(url: url)
        } catch {
            throw .badValue(
                argument: "--cluster", value: RedisEndpoint.redacted(url), expected: "redis://HOST:PORT; \(error)")
        }
        if let passwordFile, endpoint.password != nil {
            throw .badValue(
                argument: "--cluster-password-file", value: passwordFile,
                expected: "no password in the --cluster URL as well (give it once)")
        }
        return endpoint
    }

    static func readPassword(at path: String) throws -> String {
        let place = "cluster password file \(path)"
        if let mode = groupOrOtherReadable(path) {
            throw ServerStartError(
                place: place,
                problem: "group or other users may read it (mode \(String(mode, radix: 8))); run chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ServerStartError(place: place, problem: "cannot be read")
        }
        guard let text = String(validating: Array(data), as: UTF8.self) else {
            throw ServerStartError(place: place, problem: "is not UTF-8 text")
        }
        let line = text.prefix { $0 != "\n" && $0 != "\r\n" }
        let password = String(line.hasSuffix("\r") ? line.dropLast() : line)
        guard !password.isEmpty else {
            throw ServerStartError(place: place, problem: "has no password on its first line")
        }
        return password
    }

    /// The permission bits of the file at `path` when group or others may read it; nil when they may not (or it
    /// cannot be looked at: reading it then says why).
    static func groupOrOtherReadable(_ path: String) -> UInt32? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = UInt32(info.st_mode) & 0o777
        return mode & 0o044 != 0 ? mode : nil
    }

    /// A room of 10,000 needs more descriptors than the usual soft limit of 1,024: raise it to the hard limit.
    static func raiseOpenFileLimit(log: ServerLog) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        let soft = limit.rlim_cur
        limit.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 {
            log.warning("could not raise the open file limit; at most about \(soft) people can be connected")
        }
    }
}

/// Where the server keeps its files unless told otherwise.
enum DefaultPaths {
    /// `$XDG_DATA_HOME/clubroom`, or `~/.local/share/clubroom`.
    static var dataDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        if let base = environment["XDG_DATA_HOME"], !base.isEmpty {
            return base + "/clubroom"
        }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share/clubroom"
    }

    /// The secret file given (`--secret-file`), or else `secret` inside the data directory given (`--data`) or
    /// the default one.
    static func secretFile(_ given: String?, dataDirectory: String?) -> String {
        given ?? ((dataDirectory ?? Self.dataDirectory) + "/secret")
    }
}

/// `--public-address` names nothing clients can send to.
struct PublicAddressError: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}
