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
        let listening = try listenOnLoopback(backlog: 64)
        listener = listening.descriptor
        port = listening.port
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
                    if connectIPv4(upstream, host: "127.0.0.1", port: targetPort) == 0 {
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
