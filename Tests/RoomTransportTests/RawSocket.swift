import Foundation
import Glibc
import WebSocket

@testable import RoomTransport

/// A bare blocking TCP socket for sending hand-made bytes to a server, with receive timeouts.
final class RawSocket {
    let descriptor: Int32

    /// Connects to the port on loopback; `receiveBuffer` sets the socket's receive buffer first (the kernel
    /// doubles it), so that little of what the server sends can wait in the kernel.
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else { throw TransportError(place: "raw connect", problem: String(cString: strerror(errno))) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(descriptor) }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Sends an upgrade request and reads the response head; throws unless it is 101.
    func upgrade(path: String) throws {
        send(
            WebSocketHandshake.requestBytes(
                host: "127.0.0.1", target: path, key: "dGhlIHNhbXBsZSBub25jZQ=="))
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !(head.count >= 4 && Array(head.suffix(4)) == [13, 10, 13, 10]) {
            guard recv(descriptor, &byte, 1, 0) == 1 else {
                throw TransportError(place: "raw upgrade", problem: "no response")
            }
            head.append(byte)
        }
        guard String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw TransportError(place: "raw upgrade", problem: String(decoding: head, as: UTF8.self))
        }
    }

    /// Everything received until the peer closes or `seconds` pass.
    func readAll(seconds: Int) -> [UInt8] {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return bytes
    }
}
