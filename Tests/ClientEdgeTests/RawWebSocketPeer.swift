import Crypto
import Dispatch
import Foundation
import Glibc
import WebSocket

/// A WebSocket "server" written with bare blocking sockets, for sending a client frames that no correct server
/// would write (the Autobahn|Testsuite's cases) and for a server that stops reading. It accepts one connection,
/// answers the upgrade like a real server, then runs `script` on its own thread with the connection.
final class RawWebSocketPeer: @unchecked Sendable {
    // @unchecked: the descriptors are set once; the script's thread owns the connection while it runs.
    let port: Int
    private let listener: Int32
    private let finished = DispatchSemaphore(value: 0)

    /// Listens on a free loopback port; the first connection gets the upgrade answered and `script` run on it.
    /// `receiveBuffer` (bytes), when given, is the accepted socket's receive buffer: small, so that a peer that
    /// stops reading holds little in the kernel.
    init(receiveBuffer: Int32? = nil, script: @escaping @Sendable (RawPeerConnection) -> Void) throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        if var size = receiveBuffer {
            // Set on the listener, it is inherited by the accepted socket and applies from the handshake on.
            setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = listener
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0, listen(fd, 4) == 0 else {
            close(fd)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let done = finished
        let thread = Thread {
            defer { done.signal() }
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 10_000) == 1 else { return }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            let connection = RawPeerConnection(descriptor: client)
            defer { connection.close() }
            guard connection.answerUpgrade() else { return }
            script(connection)
        }
        thread.start()
    }

    var url: String { "ws://127.0.0.1:\(port)/rooms/lobby" }

    /// Gives this process's socket connected to the peer a send buffer of `bytes`, fixed: the kernel no longer
    /// grows it as the connection goes, so what the kernel takes from a client whose peer stops reading is
    /// bounded once and for all. False if no such socket is open.
    func fixClientSendBuffer(bytes: Int32) -> Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in names.compactMap(Int32.init) {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
            }
            guard named == 0, address.sin_family == sa_family_t(AF_INET),
                Int(UInt16(bigEndian: address.sin_port)) == port
            else { continue }
            var size = bytes
            return setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size)) == 0
        }
        return false
    }

    /// Waits up to `seconds` for the script to end; false if it did not.
    @discardableResult
    func waitUntilDone(seconds: Double = 20) -> Bool {
        finished.wait(timeout: .now() + seconds) == .success
    }

    deinit {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

/// The accepted connection of a ``RawWebSocketPeer``: raw bytes out, raw bytes in.
final class RawPeerConnection: @unchecked Sendable {
    // @unchecked: used by the peer's one thread.
    let descriptor: Int32
    /// Bytes read after the upgrade request's head, not yet handed out.
    private var leftover: [UInt8] = []

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Reads the upgrade request and answers `101 Switching Protocols` with the right accept key.
    fileprivate func answerUpgrade() -> Bool {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while true {
            if let length = try? WebSocketHandshake.headLength(in: head, maxHeadSize: 8192) {
                leftover = Array(head[length...])
                head = Array(head[..<length])
                break
            }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { return false }
            head += buffer[..<count]
        }
        guard let request = try? WebSocketUpgradeRequest.parse(head: head) else { return false }
        let accept = WebSocketHandshake.acceptKey(forKey: request.key, sha1: SHA1.digest)
        send(WebSocketHandshake.acceptResponseBytes(acceptKey: accept))
        return true
    }

    /// Writes all of `bytes` (blocking).
    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Glibc.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { return }
            offset += count
        }
    }

    /// Sends each chunk with its own write, a moment apart, so the client reads them one at a time.
    func send(chunks: [[UInt8]]) {
        for chunk in chunks {
            send(chunk)
            usleep(2_000)
        }
    }

    /// Everything received until the client ends its side of the stream or `seconds` pass without a byte.
    func readUntilEnd(seconds: Int = 5) -> (bytes: [UInt8], ended: Bool) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var bytes = leftover
        leftover = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { return (bytes, true) }
            if count < 0 { return (bytes, false) }
            bytes.append(contentsOf: buffer[0..<count])
        }
    }

    /// The messages the client sent (it masks them; they are read as a server reads them), and the decoder's
    /// error if its bytes broke the framing.
    static func messages(in bytes: [UInt8]) -> (messages: [WebSocketMessage], error: WebSocketProtocolError?) {
        var decoder = WebSocketDecoder(role: .server, maxMessageSize: 64 * 1024 * 1024)
        decoder.feed(bytes)
        var messages: [WebSocketMessage] = []
        do {
            while let message = try decoder.next() { messages.append(message) }
        } catch {
            return (messages, error)
        }
        return (messages, nil)
    }

    func close() {
        Glibc.close(descriptor)
    }
}

/// A frame as a server writes it (unmasked unless `mask` is given), with every header bit under the caller's
/// control: the RSV bits and any opcode, reserved ones included.
func rawFrame(
    fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, _ payload: [UInt8] = [], mask: [UInt8]? = nil
) -> [UInt8] {
    var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv & 7) << 4 | (opcode & 0x0F)]
    let maskBit: UInt8 = mask == nil ? 0 : 0x80
    switch payload.count {
    case 0...125: bytes.append(maskBit | UInt8(payload.count))
    case 126...0xFFFF: bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    default:
        bytes += [maskBit | 127] + (0..<8).map { UInt8(truncatingIfNeeded: UInt64(payload.count) >> (56 - 8 * $0)) }
    }
    guard let mask else { return bytes + payload }
    return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
}
