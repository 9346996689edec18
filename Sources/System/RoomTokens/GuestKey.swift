import Crypto
import RoomProtocol

/// What an invite holder's client shows one server instead of its long-term guest key: a key derived for that
/// server's origin alone, so that no server (nor anyone who reads what the client sends it) learns anything it
/// could use at another server. See `docs/tokens.md`, "Who holds an invite".
public enum GuestKey {
    /// The label mixed into each derivation, so the derived key can never equal another use of the guest key.
    static let label = "clubroom guest origin v1:"

    /// The origin the client connects to: scheme, host (lower case) and port, always with the port, such as
    /// `wss://rooms.example.org:443`. Taken from the address the client itself connects to; the path (a proxy's
    /// prefix, the room) and everything the link carries after `#` are left out.
    public static func origin(of server: ServerAddress) -> String {
        let host = server.host.lowercased()
        let name = host.contains(":") ? "[\(host)]" : host
        return (server.secure ? "wss://" : "ws://") + name + ":\(server.port)"
    }

    /// The key presented to `server`: HMAC-SHA256(guest key, "clubroom guest origin v1:" + origin), 32 bytes.
    /// Nil only when the HMAC itself fails.
    public static func presented(guestKey: [UInt8], to server: ServerAddress) -> [UInt8]? {
        HMACSHA256.sign(key: guestKey, message: Array((label + origin(of: server)).utf8))
    }

    /// Whether a guest key may be presented to `server` at all: over `wss://`, or over `ws://` to this machine
    /// only (a loopback address or `localhost`), where nobody on the way can read it.
    public static func mayPresent(to server: ServerAddress) -> Bool {
        server.secure || server.isLoopback
    }
}
