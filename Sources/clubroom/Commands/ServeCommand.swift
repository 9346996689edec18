import Arguments

/// `clubroom serve`: the room server.
enum ServeCommand: ClubroomCommand {
    static let declaration = Command(
        name: "serve", abstract: "Run a room server.",
        discussion: """
            Serves rooms over WebSocket at ws://HOST:PORT/rooms/ROOM (wss:// with --tls-cert and --tls-key). \
            People join with a token signed by the server's secret; see 'clubroom token'. Rooms, the \
            moderation log and recent chat are kept in an SQLite database in the data directory. Logs go to \
            stderr.
            """,
        options: [
            .value(
                "listen", placeholder: "HOST:PORT", type: .endpoint, default: "127.0.0.1:7480",
                help: "Address to listen on; port 0 picks a free port."),
            .value(
                "data", placeholder: "DIR", type: .path, defaultDescription: "$XDG_DATA_HOME/clubroom",
                help: "Directory for the database."),
            .value(
                "secret-file", placeholder: "FILE", type: .path, defaultDescription: "DIR/secret",
                help: "File holding the secret that signs tokens; created with mode 0600 when missing."),
            .value("tls-cert", placeholder: "FILE", type: .path, help: "PEM certificate chain for wss://."),
            .value("tls-key", placeholder: "FILE", type: .path, help: "PEM private key for wss://."),
            .value(
                "roles", placeholder: "FILE", type: .path, defaultDescription: "the built-in table",
                help: "Role table in JSON, in the format of Resources/roles.json."),
        ])

    /// The server's settings, as given on the command line.
    struct Options: Equatable {
        var listen: Endpoint
        var dataDirectory: String?
        var secretFile: String?
        var tlsCertificate: String?
        var tlsKey: String?
        var rolesFile: String?

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            listen = arguments.endpoint("listen") ?? Endpoint(host: "127.0.0.1", port: 7480)
            dataDirectory = arguments.path("data")
            secretFile = arguments.path("secret-file")
            tlsCertificate = arguments.path("tls-cert")
            tlsKey = arguments.path("tls-key")
            rolesFile = arguments.path("roles")
            if tlsCertificate != nil, tlsKey == nil { throw .needs(option: "--tls-cert", needed: "--tls-key FILE") }
            if tlsKey != nil, tlsCertificate == nil { throw .needs(option: "--tls-key", needed: "--tls-cert FILE") }
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        _ = try Options(arguments)
        throw CommandFailure.notAvailable("the room server is not available in this build yet")
    }
}
