import Arguments
import Foundation
import RoomPersistence

/// `clubroom links`: the server's registry of invite links, for its operator.
enum LinksCommand: ClubroomCommand {
    static let declaration = Command(
        name: "links", abstract: "List or withdraw the server's invite links.",
        discussion: """
            Lists the invite links the server knows: those made with /link in a room, and those made with \
            clubroom invite once someone used them. 'revoke ID' withdraws one link (also one not used yet); \
            'revoke all' withdraws every link made until now, of one room with --room or of the whole server, \
            without touching the server's secret: tokens and links made afterwards keep working. Run it on the \
            server's machine, beside a running server or not; a link withdrawn is refused at its next use.
            """,
        positionals: [
            Positional(
                "action", type: .choice(["list", "revoke"]), required: false,
                help: "list (the default) or revoke."),
            Positional("id", type: .string, required: false, help: "With revoke: the link's id, or all."),
        ],
        options: [room.option, data.option])

    static let room = TypedOption.string("room", placeholder: "ROOM", help: "Only this room's links.")
    static let data = TypedOption.path(
        "data", placeholder: "DIR", defaultDescription: "$XDG_DATA_HOME/clubroom",
        help: "The server's data directory (its --data): the registry is DIR/links.db.")

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let data = arguments[LinksCommand.data] ?? DefaultPaths.dataDirectory
        let room = arguments[LinksCommand.room]
        let path = data + "/" + LinkRegistry.fileName
        guard FileManager.default.fileExists(atPath: data) else {
            throw JoinFailure(text: "there is no data directory \(data); give the server's with --data DIR")
        }
        let registry = try LinkRegistry(path: path)
        let now = Int64(Date().timeIntervalSince1970)
        switch arguments.choice("action") ?? "list" {
        case "revoke":
            guard let id = arguments.string("id"), !id.isEmpty else {
                throw ArgumentError.missingPositional("<id>")
            }
            if id == "all" {
                let count = try registry.withdrawAll(room: room, by: "operator", at: now)
                writeOutput(
                    "Withdrew every link \(room.map { "to room \($0)" } ?? "of the server") made until now "
                        + "(\(count) of them known here).\n")
            } else if try registry.revoke(id, room: room, by: "operator", at: now) {
                writeOutput("Withdrew link \(id).\n")
            } else {
                writeOutput("Link \(id) was withdrawn already.\n")
            }
        default:
            if arguments.string("id") != nil { throw ArgumentError.unexpectedArgument(arguments.string("id") ?? "") }
            let links = try registry.links(room: room)
            writeOutput(table(links, now: now))
        }
        return .success
    }

    /// One line per link, newest first, under a heading.
    static func table(_ links: [LinkRecord], now: Int64) -> String {
        guard !links.isEmpty else { return "No links.\n" }
        func date(_ seconds: Int64) -> String { seconds == 0 ? "-" : TextTable.utc(seconds) }
        var rows = [["ID", "ROOM", "ROLE", "MADE BY", "MADE (UTC)", "EXPIRES (UTC)", "USES", "STATE"]]
        for link in links {
            let state =
                link.revokedAt != nil
                ? "withdrawn by \(link.revokedBy ?? "?")"
                : link.expiresAt != 0 && link.expiresAt <= now ? "expired" : "works"
            rows.append([
                link.id, link.room ?? "(server)", link.role.isEmpty ? "-" : link.role,
                link.creator.isEmpty ? "operator" : link.creator, date(link.createdAt), date(link.expiresAt),
                link.maxUses.map { "\(link.uses)/\($0)" } ?? "\(link.uses)", state,
            ])
        }
        return TextTable.text(rows)
    }
}
