internal import CMediaIO
import Glibc

/// An IPv4 address and port.
public struct UDPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in host byte order (127.0.0.1 is 0x7F00_0001).
    public var ipv4: UInt32
    public var port: UInt16

    public init(ipv4: UInt32, port: UInt16) {
        self.ipv4 = ipv4
        self.port = port
    }

    /// Parses a dotted IPv4 address; `localhost` is 127.0.0.1.
    public init?(host: String, port: UInt16) {
        let text = host == "localhost" ? "127.0.0.1" : host
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        self.init(ipv4: UInt32(bigEndian: address.s_addr), port: port)
    }

    public static func loopback(port: UInt16) -> UDPAddress { UDPAddress(ipv4: 0x7F00_0001, port: port) }

    public var description: String {
        "\(ipv4 >> 24).\(ipv4 >> 16 & 0xFF).\(ipv4 >> 8 & 0xFF).\(ipv4 & 0xFF):\(port)"
    }

    var socketAddress: sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = ipv4.bigEndian
        return address
    }

    init(_ address: sockaddr_in) {
        self.init(ipv4: UInt32(bigEndian: address.sin_addr.s_addr), port: UInt16(bigEndian: address.sin_port))
    }
}

extension UDPAddress: LosslessStringConvertible {
    /// Reads `A.B.C.D:PORT` as `description` writes it (`localhost` stands for 127.0.0.1); nil for anything else.
    public init?(_ description: String) {
        guard let colon = description.lastIndex(of: ":"),
            let port = UInt16(description[description.index(after: colon)...])
        else { return nil }
        self.init(host: String(description[..<colon]), port: port)
    }
}

/// A UDP socket call failed: which call, and errno's text.
public struct UDPError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var code: Int32

    public var description: String { "UDP \(operation): \(String(cString: strerror(code)))" }
}

/// A non-blocking IPv4 UDP socket with batched sending and receiving (sendmmsg/recvmmsg).
///
/// The descriptor is only read after creation and closed once in `deinit`; the kernel serialises concurrent
/// calls on it, so sharing the socket between a receiving thread and a sending thread is safe.
public final class UDPSocket: @unchecked Sendable {
    let descriptor: Int32
    /// The address the socket is bound to (with the port the kernel chose for port 0).
    public let localAddress: UDPAddress
    /// The descriptor, for registering with an event poll; the socket still owns and closes it.
    public var fileDescriptor: Int32 { descriptor }

    /// Binds to `address` (port 0 picks a free port). `bufferBytes` sizes the kernel's send and receive queues.
    public init(binding address: UDPAddress, bufferBytes: Int = 4 << 20) throws(UDPError) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw UDPError(operation: "socket", code: errno) }
        var size = Int32(clamping: bufferBytes)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var bound = address.socketAddress
        let status = withUnsafePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            let code = errno
            close(fd)
            throw UDPError(operation: "bind \(address)", code: code)
        }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = fd
        localAddress = UDPAddress(local)
    }

    deinit {
        close(descriptor)
    }

    /// Connects the socket to `address`: from now on the kernel delivers only datagrams from that address (and
    /// port) to it, and drops every other one before it is read.
    public func connect(to address: UDPAddress) throws(UDPError) {
        var target = address.socketAddress
        let status = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else { throw UDPError(operation: "connect \(address)", code: errno) }
    }

    /// Sends one datagram; returns false when the kernel's queue is full (the datagram is dropped).
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, to address: UDPAddress) -> Bool {
        var target = address.socketAddress
        let sent = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(
                    descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0,
                    socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return sent == bytes.count
    }

    /// Sends bytes held in an array.
    @discardableResult
    public func send(_ bytes: [UInt8], to address: UDPAddress) -> Bool {
        bytes.withUnsafeBytes { send($0, to: address) }
    }

    /// Receives one datagram into `buffer` without waiting; `nil` when none is queued.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) -> (length: Int, from: UDPAddress)? {
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let received = withUnsafeMutablePointer(to: &from) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT), $0, &length)
            }
        }
        guard received >= 0 else { return nil }
        return (received, UDPAddress(from))
    }

    /// Asks the kernel to note when each datagram arrives, for ``ReceiveBatch/receiveStamped(from:)``; false when
    /// it refuses.
    /// When no other socket of the machine had stamps on, the kernel turns them on a moment later: datagrams
    /// that arrive before then are stamped when they are read (an age of about 0).
    public func stampArrivals() -> Bool {
        clubroom_enable_arrival_stamps(descriptor) == 0
    }

    /// Waits until a datagram is queued or the timeout passes; true when one is.
    public func waitReadable(timeoutMilliseconds: Int32) -> Bool {
        var descriptorPoll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptorPoll, 1, timeoutMilliseconds) > 0
    }

    /// Waits until the kernel's send queue has room or the timeout passes.
    func waitWritable(timeoutMilliseconds: Int32) -> Bool {
        var descriptorPoll = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        return poll(&descriptorPoll, 1, timeoutMilliseconds) > 0
    }
}

/// Preallocated slots for receiving many datagrams with one recvmmsg call.
///
/// Owned by one thread; the slots' memory lives as long as the batch.
public final class ReceiveBatch {
    public let capacity: Int
    public let slotSize: Int
    let storage: UnsafeMutableRawBufferPointer
    let addresses: UnsafeMutableBufferPointer<sockaddr_in>
    let datagrams: UnsafeMutableBufferPointer<clubroom_datagram>
    /// Per slot, how long ago its datagram arrived (ns, -1 without a stamp), after `receiveStamped`.
    let ages: UnsafeMutableBufferPointer<Int64>
    /// How many slots the last `receive` filled.
    public private(set) var count = 0

    /// `slotSize` bytes per datagram (room for the largest packet plus the SRTP trailer).
    public init(capacity: Int = 64, slotSize: Int = 1500) {
        self.capacity = min(capacity, Int(CLUBROOM_MAX_BATCH))
        self.slotSize = slotSize
        storage = .allocate(byteCount: self.capacity * slotSize, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        addresses = .allocate(capacity: self.capacity)
        addresses.initialize(repeating: sockaddr_in())
        datagrams = .allocate(capacity: self.capacity)
        ages = .allocate(capacity: self.capacity)
        ages.initialize(repeating: -1)
        for index in 0..<self.capacity {
            datagrams[index] = clubroom_datagram(
                base: storage.baseAddress! + index * slotSize, capacity: slotSize, length: 0,
                address: UnsafeMutableRawPointer(addresses.baseAddress! + index),
                address_length: UInt32(MemoryLayout<sockaddr_in>.size))
        }
    }

    deinit {
        storage.deallocate()
        addresses.deallocate()
        datagrams.deallocate()
        ages.deallocate()
    }

    /// Receives what is queued, up to `capacity` datagrams (64 at most), without waiting, with how long ago each
    /// arrived (``ageMicroseconds(_:)``, from the kernel's stamps after ``UDPSocket/stampArrivals()``); returns
    /// how many. One system call for what a thread that wakes on its own schedule finds queued.
    public func receiveStamped(from socket: UDPSocket) -> Int {
        for index in 0..<capacity {
            datagrams[index].address_length = UInt32(MemoryLayout<sockaddr_in>.size)
        }
        let received = clubroom_receive_batch_stamped(
            socket.descriptor, datagrams.baseAddress, UInt32(capacity), ages.baseAddress)
        count = max(0, Int(received))
        return count
    }

    /// How long ago datagram `index` of the last ``receiveStamped(from:)`` arrived, in microseconds; 0 when it
    /// carries no stamp.
    public func ageMicroseconds(_ index: Int) -> Int64 { max(0, ages[index] / 1000) }

    /// Receives what is queued, up to `capacity` datagrams, without waiting; returns how many.
    public func receive(from socket: UDPSocket) -> Int {
        for index in 0..<capacity {
            datagrams[index].address_length = UInt32(MemoryLayout<sockaddr_in>.size)
        }
        let received = clubroom_receive_batch(socket.descriptor, datagrams.baseAddress, UInt32(capacity))
        count = max(0, Int(received))
        return count
    }

    /// The whole slot of datagram `index` (its bytes start at the beginning).
    public func slot(_ index: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: storage[(index * slotSize)..<((index + 1) * slotSize)])
    }

    /// How many bytes datagram `index` holds.
    public func length(_ index: Int) -> Int { datagrams[index].length }

    /// Who sent datagram `index`.
    public func sender(_ index: Int) -> UDPAddress { UDPAddress(addresses[index]) }
}

/// A batch of datagrams to send with sendmmsg: the bytes stay where the caller keeps them until `flush`.
///
/// Owned by one thread.
public final class SendBatch {
    public let capacity: Int
    let addresses: UnsafeMutableBufferPointer<sockaddr_in>
    let datagrams: UnsafeMutableBufferPointer<clubroom_datagram>
    public private(set) var count = 0
    /// Datagrams the kernel would not take (its queue stayed full).
    public private(set) var dropped = 0
    /// sendmmsg calls made.
    public private(set) var calls = 0

    public init(capacity: Int = 256) {
        self.capacity = min(capacity, Int(CLUBROOM_MAX_BATCH))
        addresses = .allocate(capacity: self.capacity)
        addresses.initialize(repeating: sockaddr_in())
        datagrams = .allocate(capacity: self.capacity)
        for index in 0..<self.capacity {
            datagrams[index] = clubroom_datagram(
                base: nil, capacity: 0, length: 0, address: UnsafeMutableRawPointer(addresses.baseAddress! + index),
                address_length: UInt32(MemoryLayout<sockaddr_in>.size))
        }
    }

    deinit {
        addresses.deallocate()
        datagrams.deallocate()
    }

    /// Queues `bytes` for `address`, sending the batch first when it is full. The bytes must stay valid until
    /// the next `flush` (or the `append` that fills the batch).
    public func append(_ bytes: UnsafeRawBufferPointer, to address: UDPAddress, on socket: UDPSocket) {
        if count == capacity { flush(on: socket) }
        addresses[count] = address.socketAddress
        datagrams[count].base = UnsafeMutableRawPointer(mutating: bytes.baseAddress)
        datagrams[count].length = bytes.count
        count += 1
    }

    /// Sends everything queued. A full kernel queue is waited on briefly, then what remains is dropped and counted.
    public func flush(on socket: UDPSocket) {
        var offset = 0
        var waits = 0
        while offset < count {
            calls += 1
            let sent = clubroom_send_batch(
                socket.descriptor, datagrams.baseAddress! + offset, UInt32(count - offset))
            if sent > 0 {
                offset += Int(sent)
                continue
            }
            if sent < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS, waits < 20 {
                waits += 1
                _ = socket.waitWritable(timeoutMilliseconds: 1)
                continue
            }
            if sent < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != ENOBUFS {
                // One bad destination (ECONNREFUSED, EINVAL) must not stop the others: skip it.
                dropped += 1
                offset += 1
                continue
            }
            dropped += count - offset
            break
        }
        count = 0
    }
}
