import Arguments
import ClubroomResources
import Foundation
import Platform
import RoomCore
import RoomProtocol
import RoomServer
import RoomTokens

/// `clubroom invite`: a link to paste into a chat.
enum InviteCommand: ClubroomCommand {
    static let declaration = Command(
        name: "invite", abstract: "Print an invite link to a server's lobby or one room.",
        discussion: """
            Prints one line: a link anyone can open with 'clubroom join LINK' as it is. Without a room it is a \
            server link: its holders see the server's lobby and may join any room listed there, in the role \
            given. With a room (--room, or a room's address) it opens that room only. The invite rides in the \
            link's #fragment, which no proxy or server log sees. The link stops working when it expires (at \
            most 30 days, as for /link), when it has admitted --max-uses people, or when it is withdrawn \
            ('clubroom links revoke', or /revoke in the room). Run it where the server's secret is (see \
            'clubroom serve').
            """,
        positionals: [
            Positional(
                "url", type: .url(schemes: ["ws", "wss"]),
                help: "The server's address as people reach it, such as wss://rooms.example.org.")
        ],
        options: [
            .value("room", placeholder: "ROOM", help: "Make a room link for this room only."),
            .value(
                "role", placeholder: "ROLE", default: "audience",
                help: "Role the link gives: listener (audience), speaker, mod (moderator), host, or one from --roles."),
            .value(
                "ttl", placeholder: "DURATION", type: .duration, default: "7d",
                help: "How long the link works, from 1m to 30d, such as 1h, 2d or 30d."),
            .value(
                "max-uses", placeholder: "N", type: .integer(1...1_000_000),
                help: "How many people the link may admit (default: no limit)."),
            .value(
                "data", placeholder: "DIR", type: .path, defaultDescription: "$XDG_DATA_HOME/clubroom",
                help: "The server's data directory (its --data): the secret is DIR/secret."),
            .value(
                "secret-file", placeholder: "FILE", type: .path, defaultDescription: "DIR/secret",
                help: "File holding the server's secret (its --secret-file); never created here."),
            .value(
                "roles", placeholder: "FILE", type: .path, defaultDescription: "the built-in table",
                help: "The server's role table, to check the role against."),
        ])

    struct Options: Equatable {
        var url: String
        var room: String?
        var role: String
        var timeToLive: Duration
        var secretFile: String?
        var dataDirectory: String?
        var rolesFile: String?
        var maxUses: Int?

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            url = arguments.string("url") ?? ""
            room = arguments.string("room")
            role = arguments.string("role") ?? "audience"
            timeToLive = arguments.duration("ttl") ?? .seconds(7 * 86_400)
            secretFile = arguments.path("secret-file")
            dataDirectory = arguments.path("data")
            rolesFile = arguments.path("roles")
            maxUses = arguments.integer("max-uses")
            let seconds = timeToLive.inSecondsRoundedUp
            guard ClientRequest.linkLifetimes.contains(seconds) else {
                let unit = [(86_400, "d"), (3600, "h"), (60, "m")].first { seconds % Int64($0.0) == 0 }
                throw .badValue(
                    argument: "--ttl", value: unit.map { "\(seconds / Int64($0.0))\($0.1)" } ?? "\(seconds)s",
                    expected: "a lifetime from 1m to 30d, as for /link")
            }
            if role.isEmpty { throw .badValue(argument: "--role", value: role, expected: "a role name") }
            if let room, !PlainName.isValid(room) {
                throw .badValue(
                    argument: "--room", value: room, expected: "1 to 64 letters, digits, '-', '_' or '.'")
            }
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let options = try Options(arguments)
        let address = try readLink(options.url)
        if address.invite != nil {
            throw JoinFailure(text: "Give the server's address, not a link: \(address.url).")
        }
        if let room = options.room, let inAddress = address.room, room != inAddress {
            throw JoinFailure(text: "The address names room \(inAddress) and --room names \(room); give one.")
        }
        let room = options.room ?? address.room
        let role = try roleArgument(options.role, rolesFile: options.rolesFile)
        let seconds = options.timeToLive.inSecondsRoundedUp
        let token = try TokenCommandCore.mintInvite(
            room: room, role: role, ttl: seconds,
            secretFile: options.secretFile
                ?? DefaultPaths.secretFile(dataDirectory: options.dataDirectory ?? DefaultPaths.dataDirectory),
            now: Int64(Date().timeIntervalSince1970), maxUses: options.maxUses.map(Int64.init))
        if !address.server.secure, !MediaAddressPolicy.isLoopback(address.server.host) {
            writeError(
                "clubroom invite: warning: \(address.server) has no TLS: anyone on the network between the people "
                    + "invited and the server can read this invite, and everything said; serve with --tls-cert and "
                    + "--tls-key (or behind a reverse proxy with TLS) and invite to wss://\n")
        }
        writeOutput(address.server.link(room: room, invite: token) + "\n")
        return .success
    }
}
