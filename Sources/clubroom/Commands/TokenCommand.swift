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
        options: [room.option, identity.option, name.option, role.option, timeToLive.option]
            + ServerSigning.options(secretFile: secretFile))

    static let room = TypedOption.required("room", placeholder: "ROOM", help: "Room the token admits to.")
    static let identity = TypedOption.required(
        "identity", placeholder: "ID", help: "Stable identity of the person.")
    static let name = TypedOption.string(
        "name", placeholder: "NAME", defaultDescription: "the identity", help: "Display name in the room.")
    static let role = TypedOption.required(
        "role", placeholder: "ROLE",
        help: "Role in the room: host, mod (moderator), speaker, listener (audience), recorder, or one from --roles.")
    static let timeToLive = TypedOption.duration(
        "ttl", placeholder: "DURATION", default: .seconds(3600),
        help: "How long the token stays valid, such as 30m, 12h or 7d.")
    static let secretFile = TypedOption.path(
        "secret-file", placeholder: "FILE", defaultDescription: "DIR/secret",
        help: "File holding the server's secret (its --secret-file).")

    /// What the token will say, as given on the command line.
    struct Options: Equatable {
        var room: String
        var identity: String
        var name: String
        var role: String
        var timeToLive: Duration
        var signing: ServerSigning

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            room = arguments[TokenCommand.room]
            identity = arguments[TokenCommand.identity]
            name = arguments[TokenCommand.name] ?? identity
            role = arguments[TokenCommand.role]
            timeToLive = arguments[TokenCommand.timeToLive]
            signing = ServerSigning(arguments, secretFile: TokenCommand.secretFile)
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
            role: try roleArgument(options.role, rolesFile: options.signing.rolesFile), ttl: seconds,
            secretFile: options.signing.secretPath,
            now: Int64(Date().timeIntervalSince1970))
        writeOutput(token + "\n")
        return .success
    }
}
