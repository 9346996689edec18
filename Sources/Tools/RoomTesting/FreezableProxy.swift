import Foundation
import Glibc
import Platform
import Synchronization

/// A TCP proxy on loopback in front of a server, for tests: while frozen it holds every byte in both
/// directions and keeps the connections open, the way a frozen or cut-off peer looks to the other side. New
/// connections made while frozen get as far as the kernel's accept queue and reach the server once thawed, as
/// a connection attempt during a network partition gets through when the network returns.
public final class FreezableProxy: @unchecked Sendable {
    // Safe to share: `listener` is fixed; the pairs are touched by the proxy thread only; flags are atomic.
    public let port: Int
    private let listener: Int32
    private let targetPort: Int
    private let frozen = Atomic<Bool>(false)
    private let running = Atomic<Bool>(true)
    private let stopped = DispatchSemaphore(value: 0)

    /// Listens on a free port of 127.0.0.1 and forwards to `targetPort` there.
    public init(targetPort: Int) throws {
        self.targetPort = targetPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        _ = setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 64) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        startThread(named: "test-proxy") { [self] in run() }
    }

    deinit {
        running.store(false, ordering: .releasing)
        stopped.wait()
        close(listener)
    }

    /// Holds all traffic from now on.
    public func freeze() { frozen.store(true, ordering: .releasing) }

    /// Passes traffic again, held bytes first.
    public func thaw() { frozen.store(false, ordering: .releasing) }

    private static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func run() {
        var pairs: [(Int32, Int32)] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while running.load(ordering: .acquiring) {
            let isFrozen = frozen.load(ordering: .acquiring)
            var polls = [pollfd(fd: listener, events: isFrozen ? 0 : Int16(POLLIN), revents: 0)]
            if !isFrozen {
                for (a, b) in pairs {
                    polls.append(pollfd(fd: a, events: Int16(POLLIN), revents: 0))
                    polls.append(pollfd(fd: b, events: Int16(POLLIN), revents: 0))
                }
            }
            guard poll(&polls, nfds_t(polls.count), 20) > 0 else { continue }
            if polls[0].revents & Int16(POLLIN) != 0 {
                let client = accept(listener, nil, nil)
                if client >= 0 {
                    let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                    var target = Self.address(port: targetPort)
                    let connected = withUnsafePointer(to: &target) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                        }
                    }
                    if connected == 0 {
                        pairs.append((client, upstream))
                    } else {
                        close(client)
                        close(upstream)
                    }
                }
            }
            guard !isFrozen else { continue }
            var closed: Set<Int32> = []
            for index in stride(from: 1, to: polls.count, by: 2)
            where polls[index].revents != 0 || polls[index + 1].revents != 0 {
                let (a, b) = pairs[(index - 1) / 2]
                for (from, to, revents) in [(a, b, polls[index].revents), (b, a, polls[index + 1].revents)]
                where revents != 0 {
                    let count = read(from, &buffer, buffer.count)
                    if count <= 0 || write(to, buffer, count) != count {
                        closed.insert(a)
                        closed.insert(b)
                    }
                }
            }
            if !closed.isEmpty {
                for descriptor in closed { close(descriptor) }
                pairs.removeAll { closed.contains($0.0) }
            }
        }
        for (a, b) in pairs {
            close(a)
            close(b)
        }
        stopped.signal()
    }
}
