import Foundation
import Platform
import Synchronization

/// A process signal, by number and by the name a log line gives it.
public struct ProcessSignal: Hashable, Sendable, CustomStringConvertible {
    /// The signal's number.
    public let number: Int32
    /// Its name, such as `SIGTERM`.
    public let name: String

    public init(_ number: Int32, name: String) {
        self.number = number
        self.name = name
    }

    public var description: String { name }

    /// Ctrl-C at a terminal in cooked mode.
    public static let interrupt = ProcessSignal(SIGINT, name: "SIGINT")
    /// A polite request to stop, from `kill` or a service manager.
    public static let terminate = ProcessSignal(SIGTERM, name: "SIGTERM")
    /// The terminal went away.
    public static let hangUp = ProcessSignal(SIGHUP, name: "SIGHUP")
}

/// Turns process signals into calls of a handler on a thread of its own, so that code may do anything (take
/// locks, post to a loop, write a log line) where a signal handler may only make async-signal-safe calls.
///
/// While it watches, the signals no longer do what they did before (end the process, or the terminal adapter's
/// restoring handlers): the process's handler for them only writes the signal's number to a pipe, and a thread
/// reading the pipe calls the handlers of the watchers of that signal. `cancel()` (or releasing the watcher) puts
/// back whatever handled them before. Watchers of the same signal nest: cancel them in the reverse order.
public final class SignalWatcher: Sendable {
    /// A signal watched and what handled it before.
    private struct Watch: @unchecked Sendable {
        // @unchecked: the C struct is only touched under the watcher's mutex.
        var signal: ProcessSignal
        var previous: sigaction
    }

    private let id: UInt64
    private let watched: Mutex<[Watch]>

    /// Watches `signals`, calling `handler` with each one that arrives, one at a time.
    public init(_ signals: [ProcessSignal], handler: @escaping @Sendable (ProcessSignal) -> Void) {
        let registry = SignalRegistry.shared
        id = registry.add(signals, handler)
        var watched: [Watch] = []
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = forwardSignal
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            var previous = sigaction()
            sigaction(signal.number, &action, &previous)
            watched.append(Watch(signal: signal, previous: previous))
        }
        self.watched = Mutex(watched)
    }

    /// Calls `handler` once, on the first of `signals` to arrive; later ones are ignored while the watcher lives.
    public convenience init(firstOf signals: [ProcessSignal], handler: @escaping @Sendable (ProcessSignal) -> Void) {
        let fired = Atomic<Bool>(false)
        self.init(signals) { signal in
            if !fired.exchange(true, ordering: .acquiringAndReleasing) { handler(signal) }
        }
    }

    /// Waits for the first of `signals` and returns it. The returned watcher keeps ignoring them until it is
    /// cancelled, so a second Ctrl-C does not cut short what the caller does next (such as shutting down).
    public static func first(of signals: [ProcessSignal]) async -> (ProcessSignal, SignalWatcher) {
        let box = Mutex<SignalWatcher?>(nil)
        let signal = await withCheckedContinuation { (continuation: CheckedContinuation<ProcessSignal, Never>) in
            let watcher = SignalWatcher(firstOf: signals) { continuation.resume(returning: $0) }
            box.withLock { $0 = watcher }
        }
        return (signal, box.withLock { $0 }!)
    }

    /// Stops watching and puts back what handled the signals before. Calling it again does nothing.
    public func cancel() {
        let stopped = watched.withLock { watched in
            defer { watched.removeAll() }
            return watched
        }
        guard !stopped.isEmpty else { return }
        for entry in stopped.reversed() {
            var previous = entry.previous
            sigaction(entry.signal.number, &previous, nil)
        }
        SignalRegistry.shared.remove(id)
    }

    deinit { cancel() }
}

/// Makes a write to a closed socket or pipe fail with `EPIPE` instead of ending the process with SIGPIPE.
public func ignoreBrokenPipes() {
    signal(SIGPIPE, SIG_IGN)
}

/// The write end of the process's signal pipe; set once, before any handler that reads it is installed.
nonisolated(unsafe) private var signalPipeWrite: Int32 = -1

/// The process's handler for every watched signal: async-signal-safe, it only writes the number to the pipe
/// (keeping `errno` as it was for the code it interrupted).
private func forwardSignal(_ number: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalPipeWrite, &byte, 1)
    errno = saved
}

/// The handlers of every live watcher, and the thread that reads the signal pipe and calls them.
private final class SignalRegistry: Sendable {
    static let shared = SignalRegistry()

    private struct Entry: Sendable {
        var id: UInt64
        var signals: Set<Int32>
        var handler: @Sendable (ProcessSignal) -> Void
        var names: [Int32: ProcessSignal]
    }

    private let entries = Mutex<[Entry]>([])
    private let nextID = Atomic<UInt64>(1)

    private init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            // A full pipe drops the byte rather than block the interrupted thread; the reader is behind anyway.
            _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
            signalPipeWrite = fds[1]
        }
        let readEnd = fds[0]
        if readEnd >= 0 { startThread(named: "signals") { [self] in readSignals(from: readEnd) } }
    }

    func add(_ signals: [ProcessSignal], _ handler: @escaping @Sendable (ProcessSignal) -> Void) -> UInt64 {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let entry = Entry(
            id: id, signals: Set(signals.map(\.number)), handler: handler,
            names: Dictionary(signals.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first }))
        entries.withLock { $0.append(entry) }
        return id
    }

    func remove(_ id: UInt64) {
        entries.withLock { $0.removeAll { $0.id == id } }
    }

    private func readSignals(from descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            for byte in buffer.prefix(count) {
                let number = Int32(byte)
                let listening = entries.withLock { $0.filter { $0.signals.contains(number) } }
                for entry in listening {
                    entry.handler(entry.names[number] ?? ProcessSignal(number, name: "signal \(number)"))
                }
            }
        }
    }
}
