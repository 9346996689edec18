import Arguments
import Foundation
import RoomPersistence

/// `clubroom bans`: the identities banned from the server's rooms, for its operator.
enum BansCommand: ClubroomCommand {
    static let declaration = Command(
        name: "bans", abstract: "List or lift the server's bans.",
        discussion: """
            Lists the identities banned from every room of the server (with /ban in a room): who banned them, \
            from which room, when and why. 'lift IDENTITY' lifts one ban (the name they \
            had works too, when one banned person had it): that identity may join again with any \
            token or link that works. Run it on the server's machine, beside a running server or not; the \
            server reads the bans at every join.
            """,
        positionals: [
            Positional(
                "action", type: .choice(["list", "lift"]), required: false, help: "list (the default) or lift."),
            Positional(
                "identity", type: .string, required: false, help: "With lift: the banned identity, or their name."),
        ],
        options: [data.option])

    static let data = TypedOption.path(
        "data", placeholder: "DIR", defaultDescription: "$XDG_DATA_HOME/clubroom",
        help: "The server's data directory (its --data): the bans are in DIR/links.db.")

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let data = arguments[BansCommand.data] ?? DefaultPaths.dataDirectory
        guard FileManager.default.fileExists(atPath: data) else {
            throw JoinFailure(text: "there is no data directory \(data); give the server's with --data DIR")
        }
        let registry = try LinkRegistry(path: data + "/" + LinkRegistry.fileName)
        defer { registry.close() }
        switch arguments.choice("action") ?? "list" {
        case "lift":
            guard let who = arguments.string("identity"), !who.isEmpty else {
                throw ArgumentError.missingPositional("<identity>")
            }
            if let identity = try registry.bannedIdentity(named: who), try registry.lift(ban: identity) {
                writeOutput("Lifted the ban of \(identity): they may join the server's rooms again.\n")
            } else {
                throw JoinFailure(
                    text:
                        "no one banned is called \(who) (or more than one is); 'clubroom bans' lists who is, by identity"
                )
            }
        default:
            if let extra = arguments.string("identity") { throw ArgumentError.unexpectedArgument(extra) }
            writeOutput(table(try registry.bans()))
        }
        return .success
    }

    /// One line per ban, newest first, under a heading.
    static func table(_ bans: [BanRecord]) -> String {
        guard !bans.isEmpty else { return "No bans.\n" }
        var rows = [["IDENTITY", "NAME", "BY", "ROOM", "WHEN (UTC)", "REASON"]]
        for ban in bans {
            rows.append([
                ban.identity, ban.name.isEmpty ? "-" : ban.name, ban.by, ban.room ?? "-", TextTable.utc(ban.at),
                ban.reason.isEmpty ? "-" : ban.reason,
            ])
        }
        return TextTable.text(rows)
    }
}
