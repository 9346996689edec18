import CEventPoll
import Dispatch
import Foundation
import Glibc
import Platform
import Synchronization

/// Something registered with an ``EventLoop`` for a file descriptor's readiness. Loop thread only.
protocol EventLoopHandler: AnyObject {
    /// Called with the epoll event bits when the descriptor is ready.
    func handle(events: UInt32)
    /// Called with the monotonic time when a tick of the loop's handlers is due, for timeouts and pings; returns
    /// when this handler next needs one (nil: not until it asks with ``EventLoop/tick(noLaterThan:)``).
    func tick(nowMilliseconds: Int64) -> Int64?
    /// The loop is stopping: release the descriptor (unregistering is not needed) and report what must be.
    func loopStopping()
}

/// A task scheduled with ``EventLoop/schedule(after:_:)``; cancel it from any thread before it runs.
public final class EventLoopTimer: Sendable {
    private let cancelled = Atomic<Bool>(false)

    /// Keeps the task from running if it has not run yet.
    public func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
}

/// One thread running an epoll loop over many non-blocking sockets.
///
/// Every socket, connection state and callback belonging to a loop is touched only on its thread; other threads
/// hand work over with ``execute(_:)``. One loop serves thousands of connections.
public final class EventLoop: @unchecked Sendable {
    // Safe to share: `handlers`, `running` and `loopThread` are touched only on the loop thread (or before it
    // starts); `pending` is behind a mutex; the descriptors are fixed for the loop's life.
    private let epollDescriptor: Int32
    private let wakeDescriptor: Int32
    private let pending = Mutex<(tasks: [@Sendable () -> Void], stopping: Bool)>(([], false))
    private var handlers: [Int32: EventLoopHandler] = [:]
    private var loopThread: pthread_t?
    private let finished = DispatchSemaphore(value: 0)
    private let started = DispatchSemaphore(value: 0)
    private var nextTick: Int64 = 0
    private var timers: [(due: Int64, order: Int, timer: EventLoopTimer, task: @Sendable () -> Void)] = []
    private var timerOrder = 0
    /// Scratch space every read on this loop goes through; loop thread only.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// The grid ticks come on: a due time is rounded up to the next multiple of it, so the handlers of a loop
    /// (thousands of connections whose pings fall due at scattered times) are ticked together, at most ten times a
    /// second, and a deadline fires up to this much late. A handler just registered is ticked at the next step.
    static let tickMilliseconds: Int64 = 100
    /// The longest the loop goes without ticking its handlers, whatever they said.
    static let longestTickGap: Int64 = 1000

    /// Starts a loop on a new thread named `name`.
    public init(name: String = "clubroom-loop") throws(TransportError) {
        signal(SIGPIPE, SIG_IGN)
        epollDescriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollDescriptor >= 0 else { throw .system("epoll_create1") }
        wakeDescriptor = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard wakeDescriptor >= 0 else {
            let error = TransportError.system("eventfd")
            Glibc.close(epollDescriptor)
            throw error
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeDescriptor
        epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, wakeDescriptor, &event)
        startThread(named: name) { [self] in
            loopThread = pthread_self()
            started.signal()
            run()
            finished.signal()
        }
        started.wait()
    }

    deinit {
        readBuffer.deallocate()
        Glibc.close(epollDescriptor)
        Glibc.close(wakeDescriptor)
    }

    /// Whether the caller runs on this loop's thread.
    public var inLoop: Bool {
        guard let loopThread else { return false }
        return pthread_equal(loopThread, pthread_self()) != 0
    }

    /// Runs `task` on the loop thread, after tasks handed over before it. Dropped once the loop has stopped.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        let accepted = pending.withLock { state -> Bool in
            if state.stopping { return false }
            state.tasks.append(task)
            return true
        }
        if accepted { wake() }
    }

    /// Runs `task` on the loop thread once `delay` has passed (up to about 1 ms late, later when the loop is busy).
    /// Tasks due at the same time run in the order they were scheduled. Meant for a modest number of timers
    /// (grace periods, periodic broadcasts), not one per message.
    @discardableResult
    public func schedule(after delay: Duration, _ task: @escaping @Sendable () -> Void) -> EventLoopTimer {
        let timer = EventLoopTimer()
        let due = Self.now() + max(0, delay.inMilliseconds)
        execute { [self] in
            timerOrder += 1
            timers.append((due: due, order: timerOrder, timer: timer, task: task))
        }
        return timer
    }

    /// Stops the loop after the tasks already handed over and waits for its thread to end (unless called on it).
    /// Connections still on the loop are dropped at once and report close code 1006.
    public func shutdown() {
        let first = pending.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        wake()
        if !inLoop { finished.wait() }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeDescriptor, &one, 8)
    }

    // MARK: Loop thread only.

    func register(_ descriptor: Int32, _ handler: EventLoopHandler, writable: Bool) throws(TransportError) {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        event.data.fd = descriptor
        guard epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, descriptor, &event) == 0 else { throw .system("epoll_ctl add") }
        handlers[descriptor] = handler
        tick(noLaterThan: Self.now())
    }

    /// Makes the next tick of the handlers come no later than the step of the grid at or after `due` (monotonic
    /// milliseconds): a handler calls it when a deadline of its own comes sooner than the one it last returned
    /// from a tick. Loop thread only.
    func tick(noLaterThan due: Int64) {
        let onGrid = Self.gridStep(atOrAfter: due)
        if onGrid < nextTick { nextTick = onGrid }
    }

    /// The first step of the tick grid at or after `time` (monotonic milliseconds, never negative).
    static func gridStep(atOrAfter time: Int64) -> Int64 {
        (time + tickMilliseconds - 1) / tickMilliseconds * tickMilliseconds
    }

    func update(_ descriptor: Int32, writable: Bool) {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        event.data.fd = descriptor
        epoll_ctl(epollDescriptor, EPOLL_CTL_MOD, descriptor, &event)
    }

    /// Stops reporting readiness for `descriptor` while keeping its handler's ticks.
    func pause(_ descriptor: Int32) {
        var event = epoll_event()
        event.events = 0
        event.data.fd = descriptor
        epoll_ctl(epollDescriptor, EPOLL_CTL_MOD, descriptor, &event)
    }

    func unregister(_ descriptor: Int32) {
        var event = epoll_event()
        epoll_ctl(epollDescriptor, EPOLL_CTL_DEL, descriptor, &event)
        handlers[descriptor] = nil
    }

    /// The monotonic clock in milliseconds.
    static func now() -> Int64 {
        MonotonicClock.milliseconds()
    }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        nextTick = Self.now() + Self.tickMilliseconds
        while true {
            let nextDue = timers.lazy.map(\.due).min() ?? nextTick
            let timeout = Int32(max(0, min(nextTick, nextDue) - Self.now()))
            let count = events.withUnsafeMutableBufferPointer { buffer in
                epoll_wait(epollDescriptor, buffer.baseAddress, Int32(buffer.count), timeout)
            }
            if count > 0 {
                for index in 0..<Int(count) {
                    let descriptor = events[index].data.fd
                    if descriptor == wakeDescriptor {
                        var value: UInt64 = 0
                        _ = Glibc.read(wakeDescriptor, &value, 8)
                    } else if let handler = handlers[descriptor] {
                        handler.handle(events: events[index].events)
                    }
                }
            }
            let (tasks, stopping) = pending.withLock { state in
                defer { state.tasks.removeAll() }
                return (state.tasks, state.stopping)
            }
            for task in tasks { task() }
            let now = Self.now()
            if timers.contains(where: { $0.due <= now }) {
                let due = timers.filter { $0.due <= now }.sorted { ($0.due, $0.order) < ($1.due, $1.order) }
                timers.removeAll { $0.due <= now }
                for entry in due where !entry.timer.isCancelled { entry.task() }
            }
            if now >= nextTick {
                // Ticks come when a handler's deadline does (an idle connection's next ping), on the grid, not on
                // every step of it: a loop with nothing due sleeps. Deadlines set during the ticks count too.
                let nextStep = Self.gridStep(atOrAfter: now + 1)
                nextTick = nextStep - Self.tickMilliseconds + Self.longestTickGap
                for handler in Array(handlers.values) {
                    if let due = handler.tick(nowMilliseconds: now) { tick(noLaterThan: due) }
                }
                nextTick = max(nextTick, nextStep)
            }
            if stopping { break }
        }
        let remaining = Array(handlers.values)
        for handler in remaining { handler.loopStopping() }
        handlers.removeAll()
    }
}
