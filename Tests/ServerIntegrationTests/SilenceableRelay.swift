import Foundation
import Glibc
import Synchronization

/// A TCP relay on loopback in front of a server, standing for the client's network: every connection made to
/// ``port`` is carried to the server's port byte for byte. ``goSilent()`` cuts the network without a sound:
/// nothing passes in either direction and no one is told (no reset, no end of stream); new connections get as
/// far as the kernel's accept queue, their bytes waiting there. ``comeBack()`` carries on: what was held passes,
/// as TCP's retransmissions deliver what a partition held up once the path returns.
final class SilenceableRelay: Sendable {
    /// The port clients connect to instead of the server's.
    let port: UInt16
    private let listener: Int32
    private let target: UInt16
    private let silent = Atomic<Bool>(false)
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)

    /// A relay to the server listening on loopback port `target`; it runs until ``stop()``.
    init(to target: UInt16) throws {
        self.target = target
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw HarnessError(description: "socket: errno \(errno)") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw HarnessError(description: "relay bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "test-tcp-relay"
        thread.start()
    }

    /// From now on nothing passes, in either direction, on old or new connections.
    func goSilent() { silent.store(true, ordering: .releasing) }

    /// The network is back: what waited passes, and new connections reach the server.
    func comeBack() { silent.store(false, ordering: .releasing) }

    /// Stops the relay and closes every connection it carries.
    func stop() {
        if running.exchange(false, ordering: .acquiringAndReleasing) { finished.wait() }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    private func connectToServer() -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = Self.loopback(port: target)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Writes all of `count` bytes; false when the other side is gone.
    private func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Bool {
        var written = 0
        while written < count {
            let result = send(descriptor, bytes + written, count - written, Int32(MSG_NOSIGNAL))
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return false }
            written += result
        }
        return true
    }

    private func run() {
        // Each pair: the client's connection and the relay's own to the server.
        var pairs: [(client: Int32, server: Int32)] = []
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 65_536, alignment: 16)
        defer {
            buffer.deallocate()
            for pair in pairs {
                close(pair.client)
                close(pair.server)
            }
            close(listener)
        }
        while running.load(ordering: .acquiring) {
            if silent.load(ordering: .acquiring) {
                usleep(10_000)
                continue
            }
            var polls = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            for pair in pairs {
                polls.append(pollfd(fd: pair.client, events: Int16(POLLIN), revents: 0))
                polls.append(pollfd(fd: pair.server, events: Int16(POLLIN), revents: 0))
            }
            guard poll(&polls, nfds_t(polls.count), 20) > 0 else { continue }
            // The silence may have begun while poll waited: then nothing passes.
            if silent.load(ordering: .acquiring) { continue }
            var ended: Set<Int> = []
            for (index, pair) in pairs.enumerated() {
                for (from, to) in [(pair.client, pair.server), (pair.server, pair.client)] {
                    let slot = polls.firstIndex { $0.fd == from }!
                    guard polls[slot].revents != 0 else { continue }
                    let count = recv(from, buffer, 65_536, Int32(MSG_DONTWAIT))
                    if count < 0, errno == EAGAIN || errno == EINTR { continue }
                    if count <= 0 || !writeAll(to, buffer, count) { ended.insert(index) }
                }
            }
            for index in ended.sorted(by: >) {
                close(pairs[index].client)
                close(pairs[index].server)
                pairs.remove(at: index)
            }
            if polls[0].revents != 0 {
                let client = accept(listener, nil, nil)
                if client >= 0 {
                    if let server = connectToServer() {
                        pairs.append((client, server))
                    } else {
                        close(client)
                    }
                }
            }
        }
    }
}
