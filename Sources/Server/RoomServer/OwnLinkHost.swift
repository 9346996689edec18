import Foundation
import RoomTransport

/// The host in the links the server mints for its own children (its recorders and its streams): one they can
/// connect to from this machine and, behind TLS, one the certificate names, so that they can check it.
///
/// A `--listen` host that is not a wildcard is that host. On a wildcard (`0.0.0.0`, `::`) without TLS it is
/// `127.0.0.1`. On a wildcard with TLS it is the first of: an address the certificate names on loopback
/// (`127.0.0.1`, or `::1` when listening on `::`); a name it has that resolves to loopback (`localhost`); an
/// address of this machine it names; a name it has that resolves to one. When it names none of those, its first
/// name (not a wildcard name), which may still reach the server from outside; the log warns. `docs/deploy.md`.
enum OwnLinkHost {
    static let wildcards: Set<String> = ["0.0.0.0", "::", ""]

    static func choose(listening host: String, tls: TLSServerConfiguration?, log: ServerLog) -> String {
        guard wildcards.contains(host) else { return host }
        guard let tls, let named = tls.certificateNames() else { return "127.0.0.1" }
        // An IPv6 address is reachable only when the server listens on `::`.
        let reachable = { (address: String) in !address.contains(":") || host == "::" }
        let names = named.names.filter { !$0.hasPrefix("*") }
        let resolved = Dictionary(uniqueKeysWithValues: names.map { ($0, addresses(of: $0).filter(reachable)) })
        if let address = named.addresses.first(where: { reachable($0) && isLoopback($0) }) { return address }
        if let name = names.first(where: { resolved[$0]?.contains(where: isLoopback) == true }) { return name }
        if let address = named.addresses.first(where: { reachable($0) && isLocal($0) }) { return address }
        if let name = names.first(where: { resolved[$0]?.contains(where: isLocal) == true }) { return name }
        let chosen = names.first ?? named.addresses.first ?? "127.0.0.1"
        log.warning(
            "the TLS certificate \(tls.certificateFile) names no address of this machine: the server's own "
                + "recorders will reach it as \(chosen)")
        return chosen
    }

    static func isLoopback(_ address: String) -> Bool { address.hasPrefix("127.") || address == "::1" }

    /// Whether `address` is one of this machine's: a socket can be bound to it.
    static func isLocal(_ address: String) -> Bool {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(address, "0", &hints, &list) == 0, let entry = list else { return false }
        defer { freeaddrinfo(entry) }
        let descriptor = socket(entry.pointee.ai_family, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return bind(descriptor, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0
    }

    /// The addresses `name` resolves to, as text.
    static func addresses(of name: String) -> [String] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var found: [String] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(
                entry.pointee.ai_addr, entry.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST)
                == 0
            {
                found.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            cursor = entry.pointee.ai_next
        }
        return found
    }
}
