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
        options: [room.option, role.option, timeToLive.option, maxUses.option]
            + ServerSigning.options(secretFile: secretFile))

    static let room = TypedOption.string("room", placeholder: "ROOM", help: "Make a room link for this room only.")
    static let role = TypedOption.string(
        "role", placeholder: "ROLE", default: "audience",
        help: "Role the link gives: listener (audience), speaker, mod (moderator), host, recorder, or one from --roles."
    )
    static let timeToLive = TypedOption.duration(
        "ttl", placeholder: "DURATION", default: .seconds(7 * 86_400),
        help: "How long the link works, from 1m to 30d, such as 1h, 2d or 30d.")
    static let maxUses = TypedOption.integer(
        "max-uses", placeholder: "N", in: 1...1_000_000, help: "How many people the link may admit (default: no limit)."
    )
    static let secretFile = TypedOption.path(
        "secret-file", placeholder: "FILE", defaultDescription: "DIR/secret",
        help: "File holding the server's secret (its --secret-file); never created here.")

    struct Options: Equatable {
        var url: String
        var room: String?
        var role: String
        var timeToLive: Duration
        var signing: ServerSigning
        var maxUses: Int?

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            url = arguments.string("url") ?? ""
            room = arguments[InviteCommand.room]
            role = arguments[InviteCommand.role]
            timeToLive = arguments[InviteCommand.timeToLive]
            signing = ServerSigning(arguments, secretFile: InviteCommand.secretFile)
            maxUses = arguments[InviteCommand.maxUses]
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
        let role = try roleArgument(options.role, rolesFile: options.signing.rolesFile)
        let seconds = options.timeToLive.inSecondsRoundedUp
        let token = try TokenCommandCore.mintInvite(
            room: room, role: role, ttl: seconds,
            secretFile: options.signing.secretPath,
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
