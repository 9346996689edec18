import CEventPoll
import Glibc

/// Thin wrappers over the BSD socket calls, turning return codes into ``TransportError`` at once.
enum Socket {
    /// Resolves `host:port` to socket addresses (numeric hosts need no DNS).
    static func resolve(host: String, port: Int, passive: Bool) throws(TransportError) -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = passive ? AI_PASSIVE : 0
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw TransportError(
                place: "resolve \(host):\(port)", problem: String(cString: gai_strerror(status)), cause: .unresolved)
        }
        defer { freeaddrinfo(first) }
        var addresses: [[UInt8]] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr {
                let raw = UnsafeRawBufferPointer(start: address, count: Int(entry.pointee.ai_addrlen))
                addresses.append(Array(raw))
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }

    static func family(of address: [UInt8]) -> Int32 {
        address.withUnsafeBytes { Int32($0.load(as: sockaddr.self).sa_family) }
    }

    static func makeNonBlocking(_ descriptor: Int32) {
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
    }

    static func setOption(_ descriptor: Int32, _ level: Int32, _ name: Int32, _ value: Int32) {
        var value = value
        _ = setsockopt(descriptor, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// A non-blocking listening socket; returns the descriptor and the bound port (useful with port 0).
    static func listen(host: String, port: Int, backlog: Int32 = 1024) throws(TransportError) -> (Int32, Int) {
        let place = "listen \(host):\(port)"
        var lastError = TransportError(place: place, problem: "no address")
        for address in try resolve(host: host, port: port, passive: true) {
            let descriptor = socket(family(of: address), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else {
                lastError = .system(place)
                continue
            }
            setOption(descriptor, SOL_SOCKET, SO_REUSEADDR, 1)
            let bound = address.withUnsafeBytes { raw in
                bind(descriptor, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
            }
            guard bound == 0, Glibc.listen(descriptor, backlog) == 0 else {
                lastError = .system(place)
                Glibc.close(descriptor)
                continue
            }
            makeNonBlocking(descriptor)
            return (descriptor, localPort(descriptor))
        }
        throw lastError
    }

    static func localPort(_ descriptor: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &length) }
        }
        return port(of: storage)
    }

    /// The `host:port` a connected socket's own end is bound to: which of the machine's addresses a peer reached.
    static func localAddress(_ descriptor: Int32) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return status == 0 ? describe(storage) : ""
    }

    static func port(of storage: sockaddr_storage) -> Int {
        var storage = storage
        return withUnsafeBytes(of: &storage) { raw in
            // sin_port and sin6_port sit at the same offset, in network order.
            Int(UInt16(raw[2]) << 8 | UInt16(raw[3]))
        }
    }

    /// `host:port` text for a socket address, e.g. `127.0.0.1:50000` or `[::1]:50000`.
    static func describe(_ storage: sockaddr_storage) -> String {
        var storage = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = Int32(storage.ss_family)
        withUnsafeMutableBytes(of: &storage) { raw in
            let base = raw.baseAddress!
            if family == AF_INET {
                _ = inet_ntop(AF_INET, base + 4, &text, socklen_t(text.count))
            } else if family == AF_INET6 {
                _ = inet_ntop(AF_INET6, base + 8, &text, socklen_t(text.count))
            }
        }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return family == AF_INET6 ? "[\(host)]:\(port(of: storage))" : "\(host):\(port(of: storage))"
    }

    enum AcceptOutcome {
        case connection(Int32, String)
        case noneWaiting
        /// The process or system ran out of descriptors; the pending connection stays queued.
        case exhausted
    }

    /// Accepts one pending connection, non-blocking.
    static func accept(_ listener: Int32) -> AcceptOutcome {
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let descriptor = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listener, $0, &length) }
            }
            if descriptor >= 0 {
                makeNonBlocking(descriptor)
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
                setOption(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
                return .connection(descriptor, describe(storage))
            }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EMFILE, ENFILE, ENOBUFS, ENOMEM: return .exhausted
            default: return .noneWaiting
            }
        }
    }

    /// Starts a non-blocking connect to one resolved address (see ``resolve(host:port:passive:)``); the caller waits
    /// for writability and then checks ``pendingError(_:)``.
    static func startConnect(to address: [UInt8], place: String) throws(TransportError) -> Int32 {
        let descriptor = socket(family(of: address), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system(place) }
        makeNonBlocking(descriptor)
        setOption(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        let status = address.withUnsafeBytes { raw in
            connect(descriptor, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        if status == 0 || errno == EINPROGRESS { return descriptor }
        let error = TransportError.system(place)
        Glibc.close(descriptor)
        throw error
    }

    static func shutdownWrite(_ descriptor: Int32) { _ = Glibc.shutdown(descriptor, Int32(SHUT_WR)) }

    /// Bytes the kernel holds for the peer that its end has not acknowledged yet (`TIOCOUTQ`); 0 when unknown.
    static func unacknowledgedByteCount(_ descriptor: Int32) -> Int {
        var value: Int32 = 0
        guard ioctl(descriptor, UInt(TIOCOUTQ), &value) == 0 else { return 0 }
        return Int(max(0, value))
    }

    /// The error of a finished non-blocking connect (0 when it succeeded).
    static func pendingError(_ descriptor: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &value, &length)
        return value
    }
}

/// The outcome of one read or write on a non-blocking stream.
enum StreamStep: Equatable {
    case bytes(Int)
    /// Nothing now; `wantsWrite` says a TLS read needs the socket writable first.
    case wouldBlock(wantsWrite: Bool)
    case endOfStream
    case failed(String)
}

/// A byte stream over a non-blocking socket: plain TCP, or TLS on top of it.
protocol ByteStream: AnyObject {
    /// Continues the TLS handshake; plain TCP is always done.
    func handshake() -> StreamStep
    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamStep
    func write(_ bytes: UnsafeRawBufferPointer) -> StreamStep
    /// Says goodbye at the stream level (TLS close_notify) and stops sending.
    func shutdownWrite()
    func close()
    /// Why the last step that failed failed, as a case (a TLS stream knows a certificate it could not trust, or
    /// a peer that does not speak TLS).
    var failureCause: TransportError.Cause { get }
}

extension ByteStream {
    var failureCause: TransportError.Cause { .other }
}

final class PlainStream: ByteStream {
    let descriptor: Int32
    private var closed = false

    init(descriptor: Int32) { self.descriptor = descriptor }

    func handshake() -> StreamStep { .bytes(0) }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamStep {
        while true {
            let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .endOfStream }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock(wantsWrite: false)
            default: return .failed(String(cString: strerror(errno)))
            }
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> StreamStep {
        while true {
            let count = send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .bytes(count) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock(wantsWrite: true)
            default: return .failed(String(cString: strerror(errno)))
            }
        }
    }

    func shutdownWrite() { Socket.shutdownWrite(descriptor) }

    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(descriptor)
    }
}
