import Arguments
import Crypto
import Foundation
import RoomProtocol
import RoomTokens
import RoomTransport
import WebSocket

/// How a person gets in: with a room token, an invite (from a link or `--token`), or a secret to mint their own.
/// Shared by `join` and `rooms`.
struct Entry {
    enum Kind: Equatable {
        /// A room token for one identity in one room.
        case roomToken(String)
        /// An invite: a server invite (the lobby) or a room invite.
        case invite(String)
        /// The server's secret, to mint a server invite for the lobby and room tokens for the rooms.
        case mint(secretFile: String, identity: String, name: String, role: String)
    }

    var kind: Kind
    /// The name an invite holder is shown with.
    var guestName: String
    /// The local identity an invite holder comes as (`--profile`): nil for this account's own guest key.
    var profile: String? = nil

    /// What to send to open `room` at `server`: the token, the headers that go with it, and whether it is an
    /// invite.
    func credential(
        forRoom room: String, at server: ServerAddress
    ) throws -> (token: String, headers: HTTPHeaders, invite: Bool) {
        switch kind {
        case .roomToken(let token):
            return (token, HTTPHeaders(), false)
        case .invite(let token):
            return (token, try Self.guestHeaders(name: guestName, server: server, profile: profile), true)
        case .mint(let secretFile, let identity, let name, let role):
            let token = try TokenCommandCore.mint(
                room: room, identity: identity, name: name, role: role, ttl: 12 * 3600, secretFile: secretFile,
                now: Int64(Date().timeIntervalSince1970))
            return (token, HTTPHeaders(), false)
        }
    }

    /// The server invite the lobby shows the rooms with.
    func lobbyToken() throws -> String {
        switch kind {
        case .roomToken(let token), .invite(let token):
            return token
        case .mint(let secretFile, _, _, let role):
            return try TokenCommandCore.mintInvite(
                room: nil, role: role, ttl: 12 * 3600, secretFile: secretFile, now: Int64(Date().timeIntervalSince1970))
        }
    }

    /// The key and name an invite holder's client sends to `server`. The long-term key is this person's, kept in
    /// `$XDG_STATE_HOME/clubroom/guest-key` (created, mode 0600, on first use), or in the profile's folder for
    /// another local identity (`--profile NAME`), and never leaves this machine: each server is shown a key
    /// derived for its origin alone (`GuestKey`), from which it derives the person's identity. Nothing is sent
    /// over `ws://` to another machine, where anyone on the way could read it.
    static func guestHeaders(name: String, server: ServerAddress, profile: String? = nil) throws -> HTTPHeaders {
        guard GuestKey.mayPresent(to: server) else {
            throw JoinFailure(
                text: "This link is ws:// to another machine (\(server.host)): joining with it would send who you "
                    + "are unencrypted, so Clubroom does not. Ask the host for a wss:// link.")
        }
        let secret: TokenSecret
        do {
            secret = try SecretFile.loadOrCreate(at: guestKeyPath(profile: profile))
        } catch {
            throw JoinFailure(text: "Cannot use your guest key: \(error.description)")
        }
        guard
            let presented = GuestKey.presented(
                guestKey: Array(secret.bytes.prefix(GuestHeaders.keyBytes)), to: server)
        else {
            throw JoinFailure(text: "Cannot use your guest key: the key for this server could not be derived.")
        }
        var headers = HTTPHeaders()
        headers.add(GuestHeaders.key, Base64URL.encode(presented))
        headers.add(GuestHeaders.name, GuestHeaders.encodeName(name))
        return headers
    }

    /// `$XDG_STATE_HOME/clubroom/guest-key`, or `~/.local/state/clubroom/guest-key`; with a profile,
    /// `…/clubroom/profiles/NAME/guest-key`, a separate person on the same account.
    static func guestKeyPath(
        profile: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        let base =
            environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        guard let profile else { return base + "/clubroom/guest-key" }
        return base + "/clubroom/profiles/\(profile)/guest-key"
    }

    /// Whether `name` can name a profile: 1 to 32 letters, digits, '-', '_' or '.', not starting with '.' (it
    /// becomes a folder name).
    static func isValidProfile(_ name: String) -> Bool {
        guard (1...32).contains(name.utf8.count), name.first != "." else { return false }
        return name.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
                || "-_.".unicodeScalars.contains($0)
        }
    }

    /// The name to be shown with when none is given: the login name, else "Guest".
    static func defaultName(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        for key in ["USER", "LOGNAME"] {
            if let name = environment[key], !name.isEmpty { return name }
        }
        return "Guest"
    }
}

/// Reads a link or address the way `join` and `rooms` take it: as it was pasted.
func readLink(_ text: String) throws -> ClubroomLink {
    do {
        return try ClubroomLink.parse(text)
    } catch {
        throw JoinFailure(text: error.description)
    }
}

/// A usage error for an address that is not a `ws://` or `wss://` one at all (a web address, a bare host), as
/// for any URL argument; the other problems of a link are said by `readLink`, in words about the link.
func checkLinkScheme(_ text: String) throws(ArgumentError) {
    do {
        _ = try ClubroomLink.parse(text)
    } catch {
        switch error.problem {
        case .webAddress, .scheme, .empty:
            throw .badValue(
                argument: "<url>", value: text,
                expected: "a ws:// or wss:// URL such as ws://127.0.0.1:7480/rooms/lobby")
        default:
            return
        }
    }
}
