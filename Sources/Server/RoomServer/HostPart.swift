/// The host of an address as a socket or a `Host` header gives it: `127.0.0.1` from `127.0.0.1:5000`, `::1` from
/// `[::1]:5000`, `example.org` from `example.org:443`; a bare host (an IPv6 address without brackets too) as it is.
func hostPart(_ address: String) -> String {
    if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
        return String(address[address.index(after: address.startIndex)..<close])
    }
    if address.filter({ $0 == ":" }).count == 1, let colon = address.firstIndex(of: ":") {
        return String(address[..<colon])
    }
    return address
}
