import Platform

/// Where a Clubroom server is, as people write it: `ws://` or `wss://`, a host, a port, and the path under which
/// a reverse proxy may serve it (empty when the server is at the root).
///
/// The server answers `PREFIX/rooms` (the lobby's directory) and `PREFIX/rooms/ROOM` (a room).
public struct ServerAddress: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var secure: Bool
    /// A host name or address, without IPv6 brackets.
    public var host: String
    public var port: Int
    /// The path before `/rooms`, without a trailing slash: empty, or like `/clubroom`.
    public var prefix: String

    public init(secure: Bool, host: String, port: Int, prefix: String = "") {
        self.secure = secure
        self.host = host
        self.port = port
        self.prefix = prefix
    }

    /// `ws://host:port` or `wss://host` (the default port left out), with the prefix.
    public var description: String {
        let name = host.contains(":") ? "[\(host)]" : host
        let defaultPort = secure ? 443 : 80
        return (secure ? "wss://" : "ws://") + name + (port == defaultPort ? "" : ":\(port)") + prefix
    }

    /// Whether the host is this machine: `localhost`, an address of 127.0.0.0/8, or `::1`. Only the address as
    /// written counts; a name is not looked up.
    public var isLoopback: Bool {
        let name = host.lowercased()
        if name == "localhost" || name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isNumber) && (Int(part) ?? 256) <= 255
        }
    }

    /// The host as people read it in a header: `rooms.example.org`, `127.0.0.1:7480`.
    public var displayName: String {
        let text = description
        return String(text.drop(while: { $0 != "/" }).dropFirst(2))
    }

    /// The lobby's directory: `…/rooms`.
    public var directoryURL: String { description + "/rooms" }

    /// A room's address: `…/rooms/ROOM`.
    public func roomURL(_ room: String) -> String { description + "/rooms/" + room }

    /// A link that carries an invite: to a room when `room` is given, else to the lobby. The token goes in the
    /// fragment, which no browser, proxy or server log ever sees: clients send it in a header.
    public func link(room: String?, invite token: String) -> String {
        (room.map(roomURL) ?? directoryURL) + "#" + ClubroomLink.fragmentKey + "=" + token
    }
}

/// A link or address given to `clubroom join` (or `rooms`): a server (the lobby) or one room, with the invite
/// token it carries, if any. See `docs/tokens.md`, "Invite links".
public struct ClubroomLink: Sendable, Equatable {
    /// The fragment's key: `#invite=TOKEN`.
    public static let fragmentKey = "invite"
    /// The longest link accepted, in bytes: a token of at most 4 KiB and an address.
    public static let maximumBytes = 6 * 1024

    public var server: ServerAddress
    /// The room, for a room link or address; nil for a server (the lobby).
    public var room: String?
    /// The invite token from the fragment.
    public var invite: String?

    /// `pasted` with every line break (`\n`, `\r` or both) removed together with the spaces and tabs on either side
    /// of it. Other separators (U+2028, a form feed) stay, and are refused as characters a link cannot hold.
    static func unwrapped(_ pasted: String) -> String {
        let isBreak: (Character) -> Bool = { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard pasted.contains(where: isBreak) else { return pasted }
        let lines = pasted.split(omittingEmptySubsequences: false, whereSeparator: isBreak)
        return lines.enumerated().map { index, line in
            var piece = line
            if index > 0 { piece = piece.drop { $0 == " " || $0 == "\t" } }
            if index < lines.count - 1 {
                while let last = piece.last, last == " " || last == "\t" { piece.removeLast() }
            }
            return String(piece)
        }.joined()
    }

    /// The address to connect to: the room's, or the directory's.
    public var url: String { room.map(server.roomURL) ?? server.directoryURL }

    /// Reads a link as it was pasted: surrounding spaces, quotes and angle brackets, and one trailing full stop or
    /// comma from the sentence around it, are left out, and so is each line break with the spaces around it (a
    /// link copied from a screen that wrapped it, such as the room screen's event pane). Everything else must be
    /// exactly right: a space within one line is an error.
    public static func parse(_ pasted: String) throws(LinkError) -> ClubroomLink {
        var text = Substring(unwrapped(pasted)).drop(while: \.isWhitespace)
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        // The sentence's full stop may follow the brackets ("<LINK>.") or sit inside them.
        if let last = text.last, last == "." || last == "," { text = text.dropLast() }
        for (open, close) in [("<", ">"), ("\"", "\""), ("'", "'")] where text.count >= 2 {
            if text.hasPrefix(open) && text.hasSuffix(close) { text = text.dropFirst().dropLast() }
        }
        if let last = text.last, last == "." || last == "," { text = text.dropLast() }
        guard !text.isEmpty else { throw LinkError(.empty) }
        guard text.utf8.count <= maximumBytes else { throw LinkError(.tooLong) }
        guard text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw LinkError(.badCharacter)
        }
        let secure: Bool
        var rest: Substring
        let lowered = text.lowercased()
        if lowered.hasPrefix("ws://") {
            secure = false
            rest = text.dropFirst(5)
        } else if lowered.hasPrefix("wss://") {
            secure = true
            rest = text.dropFirst(6)
        } else if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            throw LinkError(.webAddress)
        } else {
            throw LinkError(.scheme)
        }
        var fragment: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        if rest.contains("?") { throw LinkError(.query) }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let (host, port) = try readAuthority(rest[..<authorityEnd], secure: secure)
        let path = rest[authorityEnd...]
        let (prefix, room) = try readPath(path)
        var invite: String?
        if let fragment {
            let key = fragmentKey + "="
            guard fragment.hasPrefix(key) else { throw LinkError(.fragment) }
            let token = fragment.dropFirst(key.count)
            guard !token.isEmpty else { throw LinkError(.emptyToken) }
            guard token.utf8.count <= RoomToken.maximumBytes,
                token.allSatisfy({ $0 == "." || $0 == "-" || $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
                )
            else { throw LinkError(.badToken) }
            invite = String(token)
        }
        return ClubroomLink(
            server: ServerAddress(secure: secure, host: host, port: port, prefix: prefix), room: room, invite: invite)
    }

    private static func readAuthority(_ authority: Substring, secure: Bool) throws(LinkError) -> (String, Int) {
        guard !authority.isEmpty else { throw LinkError(.noHost) }
        if authority.contains("@") { throw LinkError(.userInfo) }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw LinkError(.noHost) }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw LinkError(.badPort)
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty,
            host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._:".contains($0)) })
        else { throw LinkError(.noHost) }
        var port = secure ? 443 : 80
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isNumber), let value = Int(portText),
                (1...65535).contains(value)
            else { throw LinkError(.badPort) }
            port = value
        }
        return (String(host), port)
    }

    /// `""`, `/`, `…/rooms` and `…/rooms/` are a server; `…/rooms/ROOM` is a room.
    private static func readPath(_ path: Substring) throws(LinkError) -> (prefix: String, room: String?) {
        var path = path
        if path.isEmpty || path == "/" { return ("", nil) }
        if path.hasSuffix("/") { path = path.dropLast() }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // A leading slash gives an empty first part.
        guard parts.first == "", !parts.dropFirst().contains(where: \.isEmpty) else { throw LinkError(.path) }
        let segments = Array(parts.dropFirst())
        if segments.last == "rooms" {
            return (prefixPath(segments.dropLast()), nil)
        }
        guard segments.count >= 2, segments[segments.count - 2] == "rooms" else { throw LinkError(.path) }
        let room = String(segments[segments.count - 1])
        guard PlainName.isValid(room) else { throw LinkError(.roomName(room)) }
        return (prefixPath(segments.dropLast(2)), room)
    }

    private static func prefixPath(_ segments: ArraySlice<Substring>) -> String {
        segments.isEmpty ? "" : "/" + segments.joined(separator: "/")
    }
}

/// Why a link could not be read, in words a person can act on.
public struct LinkError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Problem: Sendable, Equatable {
        case empty
        case tooLong
        case badCharacter
        case webAddress
        case scheme
        case query
        case noHost
        case userInfo
        case badPort
        case path
        case roomName(String)
        case fragment
        case emptyToken
        case badToken
    }

    public var problem: Problem

    public init(_ problem: Problem) {
        self.problem = problem
    }

    public var description: String {
        let what: String
        switch problem {
        case .empty: what = "it is empty"
        case .tooLong: what = "it is longer than any Clubroom link (\(ClubroomLink.maximumBytes) bytes)"
        case .badCharacter: what = "it has spaces or characters a link cannot hold; copy it again, all of it"
        case .webAddress: what = "it is a web address; Clubroom links start with wss:// or ws://"
        case .scheme: what = "it does not start with wss:// or ws://"
        case .query: what = "it has a ?query, which Clubroom links never carry"
        case .noHost: what = "it names no server"
        case .userInfo: what = "it has a user name before the server, which Clubroom links never carry"
        case .badPort: what = "its port is not a number from 1 to 65535"
        case .path: what = "its path is not /rooms or /rooms/ROOM"
        case .roomName(let room):
            what =
                "the room name \"\(room.prefix(64))\" is not 1 to 64 letters, digits, '-', '_' or '.'"
        case .fragment: what = "the part after # is not invite=TOKEN"
        case .emptyToken: what = "the invite after #invite= is missing"
        case .badToken: what = "the invite after #invite= is cut short or has characters an invite never has"
        }
        return "This is not a Clubroom link: \(what)."
    }
}
