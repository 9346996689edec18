import Foundation
import RoomAppRuntime
import TermUI

/// A screen that draws into memory: for tests and the benchmark. Keys are fed with `press`.
public final class HeadlessSink: FrameSink, @unchecked Sendable {
    // @unchecked: the loop thread owns the buffer; `press` and `lines` go through the lock.
    private let lock = NSLock()
    private var pending: [Key] = []
    private var shown: CellBuffer
    private var wake: (read: Int32, write: Int32)
    /// Whether frames are diffed against the last one, as the terminal does (the benchmark's work).
    public var diffs = true
    /// The diff runs of the last frame.
    public private(set) var lastRuns = 0

    public let width: Int
    public let height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
        shown = CellBuffer(width: width, height: height)
        var fds: [Int32] = [0, 0]
        _ = pipe(&fds)
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        wake = (fds[0], fds[1])
    }

    deinit {
        close(wake.read)
        close(wake.write)
    }

    public func draw(_ buffer: CellBuffer) {
        let runs = diffs ? buffer.diff(from: shown).count : 0
        lock.withLock {
            lastRuns = runs
            shown = buffer
        }
    }

    /// The text on screen now, one string per row.
    public var lines: [String] { lock.withLock { shown.lines() } }

    /// Queues a key for the loop and wakes it.
    public func press(_ key: Key) {
        lock.withLock { pending.append(key) }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    public func waitForKeys(milliseconds: Int, wakeDescriptor: Int32) -> [Key] {
        if let keys = takeKeys() { return keys }
        var descriptors = [
            pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        _ = poll(&descriptors, 2, Int32(clamping: milliseconds))
        var drain = [UInt8](repeating: 0, count: 64)
        while read(wake.read, &drain, drain.count) > 0 {}
        return takeKeys() ?? []
    }

    private func takeKeys() -> [Key]? {
        lock.withLock {
            guard !pending.isEmpty else { return nil }
            defer { pending.removeAll() }
            return pending
        }
    }
}
