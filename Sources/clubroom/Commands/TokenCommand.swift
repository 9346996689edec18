import Arguments
import Foundation
import Platform
import RoomTokens

/// `clubroom token`: mints a signed access token.
enum TokenCommand: ClubroomCommand {
    static let declaration = Command(
        name: "token", abstract: "Print an access token for a room.",
        discussion: """
            Prints a JWT signed with HS256 using the server's secret, carrying the identity, display name, \
            room and role. Give it to the person joining: clubroom join URL --token TOKEN. The secret is the \
            one clubroom serve uses: DIR/secret of its --data DIR (the same default), or its --secret-file. \
            It is never created here: a missing secret is an error.
            """,
        options: [
            .value("room", placeholder: "ROOM", required: true, help: "Room the token admits to."),
            .value("identity", placeholder: "ID", required: true, help: "Stable identity of the person."),
            .value(
                "name", placeholder: "NAME", defaultDescription: "the identity", help: "Display name in the room."),
            .value(
                "role", placeholder: "ROLE", required: true,
                help: "Role in the room: host, mod (moderator), speaker, listener (audience), or one from --roles."),
            .value(
                "ttl", placeholder: "DURATION", type: .duration, default: "1h",
                help: "How long the token stays valid, such as 30m, 12h or 7d."),
            .value(
                "data", placeholder: "DIR", type: .path, defaultDescription: "$XDG_DATA_HOME/clubroom",
                help: "The server's data directory (its --data): the secret is DIR/secret."),
            .value(
                "secret-file", placeholder: "FILE", type: .path, defaultDescription: "DIR/secret",
                help: "File holding the server's secret (its --secret-file)."),
            .value(
                "roles", placeholder: "FILE", type: .path, defaultDescription: "the built-in table",
                help: "The server's role table, to check the role against."),
        ])

    /// What the token will say, as given on the command line.
    struct Options: Equatable {
        var room: String
        var identity: String
        var name: String
        var role: String
        var timeToLive: Duration
        var secretFile: String?
        var dataDirectory: String?
        var rolesFile: String?

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            room = arguments.string("room") ?? ""
            identity = arguments.string("identity") ?? ""
            name = arguments.string("name") ?? identity
            role = arguments.string("role") ?? ""
            timeToLive = arguments.duration("ttl") ?? .seconds(3600)
            secretFile = arguments.path("secret-file")
            dataDirectory = arguments.path("data")
            rolesFile = arguments.path("roles")
            for (option, value) in [("--room", room), ("--identity", identity), ("--role", role)] where value.isEmpty {
                throw .badValue(argument: option, value: value, expected: "a non-empty value")
            }
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let options = try Options(arguments)
        let seconds = options.timeToLive.inSecondsRoundedUp
        let token = try TokenCommandCore.mint(
            room: options.room, identity: options.identity, name: options.name,
            role: try roleArgument(options.role, rolesFile: options.rolesFile), ttl: seconds,
            secretFile: options.secretFile
                ?? DefaultPaths.secretFile(dataDirectory: options.dataDirectory ?? DefaultPaths.dataDirectory),
            now: Int64(Date().timeIntervalSince1970))
        writeOutput(token + "\n")
        return .success
    }
}
