import Foundation
import Glibc

/// The IPv4 socket address of `host` (dotted quad) and `port`.
func ipv4Address(_ host: String, port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr(host)
    return address
}

/// Connects `descriptor` to `host:port`; what connect(2) returns (a non-blocking socket may say EINPROGRESS).
public func connectIPv4(_ descriptor: Int32, host: String, port: Int) -> Int32 {
    var address = ipv4Address(host, port: port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
}

/// Binds `descriptor` to a free port of 127.0.0.1, listens with `backlog` when given, and returns the port.
func bindLoopback(_ descriptor: Int32, listening backlog: Int32? = nil) throws -> Int {
    var address = ipv4Address("127.0.0.1", port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    guard bound == 0, backlog.map({ listen(descriptor, $0) == 0 }) ?? true else {
        throw POSIXError(.init(rawValue: errno) ?? .EIO)
    }
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    guard named == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A TCP socket listening on a free port of 127.0.0.1 (with SO_REUSEADDR), and the port.
func listenOnLoopback(backlog: Int32) throws -> (descriptor: Int32, port: Int) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var one: Int32 = 1
    _ = setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    return (listener, try bindLoopback(listener, listening: backlog))
}

/// Sends `request` over a fresh TCP connection to `host:port` and returns what one read of the answer gave (at
/// most `capacity` bytes), or nil when nothing connected or answered within `milliseconds`.
func askOnce(host: String, port: Int, _ request: String, milliseconds: Int, capacity: Int) -> String? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: milliseconds / 1000, tv_usec: Int((milliseconds % 1000) * 1000))
    _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard connectIPv4(descriptor, host: host, port: port) == 0 else { return nil }
    _ = request.withCString { send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    var buffer = [UInt8](repeating: 0, count: capacity)
    let received = recv(descriptor, &buffer, buffer.count, 0)
    guard received > 0 else { return nil }
    return String(decoding: buffer[0..<received], as: UTF8.self)
}
