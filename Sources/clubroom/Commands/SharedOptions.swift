import Arguments

/// Options that several commands take with the same meaning and the same words, declared once.
enum SharedOptions {
    /// `join` and `demo`.
    static let ascii = TypedOption.flag("ascii", help: "Draw with ASCII only, no Unicode symbols.")
    /// `join` and `demo`.
    static let plain = TypedOption.flag(
        "plain", help: "Line mode for screen readers and logs: events as sentences, commands from stdin.")
    /// `join` and `bot`.
    static let tokenFile = TypedOption.path(
        "token-file", placeholder: "FILE", help: "File holding the access token (kept out of ps).")
    /// `join` and `record`.
    static let linkFile = TypedOption.path(
        "link-file", placeholder: "FILE", help: "File holding the link (kept out of ps).")
    /// `invite` and `token`, which sign with the server's secret.
    static let serverData = TypedOption.path(
        "data", placeholder: "DIR", defaultDescription: "$XDG_DATA_HOME/clubroom",
        help: "The server's data directory (its --data): the secret is DIR/secret.")
    /// `invite` and `token`, which check the role they write.
    static let serverRoles = TypedOption.path(
        "roles", placeholder: "FILE", defaultDescription: "the built-in table",
        help: "The server's role table, to check the role against.")
}

/// What `invite` and `token` sign with, as given: the server's secret and its role table.
struct ServerSigning: Equatable {
    var secretFile: String?
    var dataDirectory: String?
    var rolesFile: String?

    /// The options read here, in the order help lists them: `--data`, the command's own `--secret-file` (whose
    /// help differs between the two) and `--roles`.
    static func options(secretFile: TypedOption<String?>) -> [Option] {
        [SharedOptions.serverData.option, secretFile.option, SharedOptions.serverRoles.option]
    }

    /// Reads `--data`, `--roles` and the command's own `--secret-file`.
    init(_ arguments: ParsedArguments, secretFile: TypedOption<String?>) {
        self.secretFile = arguments[secretFile]
        dataDirectory = arguments[SharedOptions.serverData]
        rolesFile = arguments[SharedOptions.serverRoles]
    }

    /// The secret file: `--secret-file`, or else DIR/secret of `--data DIR` (or of the default data directory).
    var secretPath: String { DefaultPaths.secretFile(secretFile, dataDirectory: dataDirectory) }
}
