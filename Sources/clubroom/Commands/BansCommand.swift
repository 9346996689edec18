import Arguments
import ClusterServer
import Crypto
import Foundation
import RedisClient
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
            server reads the bans at every join. With --cluster, the bans are the cluster's, in its Redis: \
            a lift holds on every node within a second.
            """,
        positionals: [
            Positional(
                "action", type: .choice(["list", "lift"]), required: false, help: "list (the default) or lift."),
            Positional(
                "identity", type: .string, required: false, help: "With lift: the banned identity, or their name."),
        ],
        options: [data.option, cluster.option, clusterPasswordFile.option, secretFile.option, clusterSecretFile.option])

    static let data = TypedOption.path(
        "data", placeholder: "DIR", defaultDescription: "$XDG_DATA_HOME/clubroom",
        help: "The server's data directory (its --data): the bans are in DIR/links.db.")
    static let cluster = TypedOption.url(
        "cluster", placeholder: "redis://HOST:PORT", schemes: ["redis"],
        help: "The cluster's Redis, as the nodes' --cluster: its bans instead of one node's copy.")
    static let clusterPasswordFile = TypedOption.path(
        "cluster-password-file", placeholder: "FILE", help: "A file whose first line is the password for Redis.")
    static let secretFile = TypedOption.path(
        "secret-file", placeholder: "FILE", defaultDescription: "DIR/secret",
        help: "With --cluster: the nodes' token secret, which the cluster secret is by default.")
    static let clusterSecretFile = TypedOption.path(
        "cluster-secret-file", placeholder: "FILE", defaultDescription: "the --secret-file",
        help: "With --cluster: the nodes' --cluster-secret-file, which the bans in Redis are sealed under.")

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let action = arguments.choice("action") ?? "list"
        let who = arguments.string("identity")
        if action == "lift", who?.isEmpty ?? true { throw ArgumentError.missingPositional("<identity>") }
        if action == "list", let extra = who { throw ArgumentError.unexpectedArgument(extra) }
        if let url = arguments[BansCommand.cluster] {
            return try runOnCluster(arguments, url: url, lift: action == "lift" ? who : nil)
        }
        for option in [clusterPasswordFile, secretFile, clusterSecretFile] where arguments[option] != nil {
            throw ArgumentError.needs(option: "--\(option.option.name)", needed: "--cluster redis://HOST:PORT")
        }
        let data = arguments[BansCommand.data] ?? DefaultPaths.dataDirectory
        guard FileManager.default.fileExists(atPath: data) else {
            throw JoinFailure(text: "there is no data directory \(data); give the server's with --data DIR")
        }
        let registry = try LinkRegistry(path: data + "/" + LinkRegistry.fileName)
        defer { registry.close() }
        if let who {
            guard let identity = try registry.bannedIdentity(named: who), try registry.lift(ban: identity) else {
                throw notBanned(who)
            }
            writeOutput("Lifted the ban of \(identity): they may join the server's rooms again.\n")
        } else {
            writeOutput(table(try registry.bans()))
        }
        return .success
    }

    /// The cluster's bans, in its Redis, opened with the cluster secret; a lift there reaches every node.
    static func runOnCluster(_ arguments: ParsedArguments, url: String, lift who: String?) throws -> ExitStatus {
        var redis = try ServeCommand.clusterEndpoint(url, passwordFile: arguments[clusterPasswordFile])
        if let path = arguments[clusterPasswordFile] {
            redis.password = try ServeCommand.readPassword(at: path)
        }
        let secretPath =
            arguments[clusterSecretFile]
            ?? DefaultPaths.secretFile(arguments[secretFile], dataDirectory: arguments[data])
        let secret: [UInt8]
        do {
            secret = try SecretFile.load(at: secretPath).bytes
        } catch {
            throw JoinFailure(text: "the cluster secret \(secretPath): \(error)")
        }
        let book = try ClusterBanBook(redis: redis, secret: secret)
        if let who {
            guard let identity = try book.lift(who, at: Int64(Date().timeIntervalSince1970)) else {
                throw notBanned(who)
            }
            writeOutput("Lifted the ban of \(identity): they may join the cluster's rooms again.\n")
            return .success
        }
        let (bans, unreadable) = try book.bans()
        writeOutput(table(bans))
        if unreadable > 0 {
            writeError(
                "clubroom bans: \(unreadable) of the cluster's bans are not sealed under this cluster secret "
                    + "(give the nodes' --cluster-secret-file); not shown\n")
        }
        return .success
    }

    static func notBanned(_ who: String) -> JoinFailure {
        JoinFailure(
            text: "no one banned is called \(who) (or more than one is); 'clubroom bans' lists who is, by identity")
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
