import Foundation
import Glibc
import Platform
import Synchronization

/// A fake server for tests: listens on a free TCP port of 127.0.0.1, records the head of every HTTP request it
/// gets (what a client sends before any answer), answers `403 Forbidden` and closes. A throw-away server that
/// someone opens a link to sees exactly this much.
public final class RecordingListener: @unchecked Sendable {
    // Safe to share: `listener` and `port` are fixed; the requests are behind a mutex.
    public let port: Int
    private let listener: Int32
    private let requests = Mutex<[String]>([])
    private let running = Atomic<Bool>(true)
    private let stopped = DispatchSemaphore(value: 0)

    public init() throws {
        let listening = try listenOnLoopback(backlog: 16)
        listener = listening.descriptor
        port = listening.port
        startThread(named: "test-recorder") { [self] in run() }
    }

    deinit {
        running.store(false, ordering: .releasing)
        stopped.wait()
        close(listener)
    }

    /// The heads of the requests received so far, in order.
    public var received: [String] { requests.withLock { $0 } }

    /// The value of header `name` (any case) in each request received so far.
    public func values(of name: String) -> [String] {
        received.compactMap { head in
            for line in head.split(separator: "\r\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                if line[..<colon].lowercased() == name.lowercased() {
                    return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }
    }

    private func run() {
        defer { stopped.signal() }
        while running.load(ordering: .acquiring) {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            var head: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline, head.count < 65536 {
                var readable = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
                guard poll(&readable, 1, 100) > 0 else { continue }
                let count = read(client, &buffer, buffer.count)
                if count <= 0 { break }
                head += buffer[0..<count]
                if String(decoding: head, as: UTF8.self).contains("\r\n\r\n") { break }
            }
            requests.withLock { $0.append(String(decoding: head, as: UTF8.self)) }
            let answer = Array("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
            _ = answer.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            close(client)
        }
    }
}
