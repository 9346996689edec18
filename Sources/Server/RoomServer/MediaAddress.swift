import RoomTransport

/// Which UDP address a client is told to send its media to: one it can reach, or none (its media then goes over
/// the WebSocket). See `docs/deploy.md`, "The media address".
///
/// 1. `--public-address` wins whenever it is given.
/// 2. A media socket bound to one address announces that address; one bound to a loopback address is announced
///    only to clients on this machine, since nobody else can reach it.
/// 3. A media socket bound to every address (`0.0.0.0`) announces the address each client reached the server
///    on (the local end of its TCP connection), unless that is a loopback address and the client is not on this
///    machine (it came through a reverse proxy here): then the address it asked for (`Host`) when that is an
///    IPv4 address, else none.
///
/// A client is "on this machine" when its connection comes from a loopback address and, if a proxy on this
/// machine forwarded it, the proxy says the client was on loopback too (the last `X-Forwarded-For` entry). So a
/// loopback address is never announced to a client that did not connect over loopback.
public enum MediaAddressPolicy {
    /// What the policy needs to know about one connection.
    public struct Facts: Sendable, Equatable {
        /// The client's `host:port` as the server saw it.
        public var remote: String
        /// The server's `host:port` the client reached.
        public var local: String
        /// The last entry of `X-Forwarded-For`, when a proxy set one.
        public var forwardedFor: String?
        /// The host of the `Host` header, without its port.
        public var requestedHost: String?

        public init(remote: String, local: String, forwardedFor: String? = nil, requestedHost: String? = nil) {
            self.remote = remote
            self.local = local
            self.forwardedFor = forwardedFor
            self.requestedHost = requestedHost
        }

        /// The facts of a server-side connection.
        public init(_ connection: WebSocketConnection) {
            let headers = connection.request?.headers
            let forwarded = headers?["X-Forwarded-For"]?.split(separator: ",").last
                .map {
                    String(
                        $0.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" })
                            .reversed())
                }
            self.init(
                remote: connection.remoteAddress, local: connection.localAddress, forwardedFor: forwarded,
                requestedHost: headers?["Host"].map(hostPart))
        }

        /// Whether the client is on this machine.
        public var clientIsLocal: Bool {
            guard MediaAddressPolicy.isLoopback(hostPart(remote)) else { return false }
            guard let forwardedFor, !forwardedFor.isEmpty else { return true }
            return MediaAddressPolicy.isLoopback(hostPart(forwardedFor))
        }
    }

    /// The host to announce for media bound to `bindHost`, or nil for none.
    public static func host(publicAddress: String?, bindHost: String, facts: Facts) -> String? {
        if let publicAddress, !publicAddress.isEmpty { return publicAddress }
        let local = facts.clientIsLocal
        if !isWildcard(bindHost) {
            if isLoopback(bindHost) { return local ? bindHost : nil }
            return bindHost
        }
        let reached = hostPart(facts.local)
        if local { return isIPv4(reached) ? reached : "127.0.0.1" }
        if isIPv4(reached), !isLoopback(reached) { return reached }
        if let asked = facts.requestedHost, isIPv4(asked), !isLoopback(asked) { return asked }
        return nil
    }

    /// `0.0.0.0`, `::` or empty: every address of the machine.
    public static func isWildcard(_ host: String) -> Bool {
        host.isEmpty || host == "0.0.0.0" || host == "::" || host == "[::]"
    }

    /// 127.0.0.0/8, `::1`, `::ffff:127.x.x.x` and `localhost`.
    public static func isLoopback(_ host: String) -> Bool {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "::1" { return true }
        if lowered.hasPrefix("::ffff:") { return isLoopback(String(lowered.dropFirst(7))) }
        return isIPv4(lowered) && lowered.hasPrefix("127.")
    }

    /// A dotted-quad IPv4 address, each part 0–255 without leading zeros.
    public static func isIPv4(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber)
                    && (part.count == 1 || part.first != "0") && Int(part).map { $0 <= 255 } == true
            }
    }
}
