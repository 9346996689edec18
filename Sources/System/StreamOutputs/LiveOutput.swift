import AudioCore
import Dispatch
import Platform
import Synchronization

/// What a live output is doing, as its reports say it.
public enum StreamState: Sendable, Equatable {
    /// Connected and sending the room.
    case live
    /// The destination refused or dropped the stream; it is tried again with backoff.
    case retrying(StreamError)
    /// Closed by the recorder; nothing more is sent.
    case closed
}

/// One change of a live output's state, with the sentence a host reads.
public struct StreamReport: Sendable, Equatable {
    /// The destination's name as reports show it (no password, no stream key).
    public var destination: String
    public var state: StreamState
    /// Frames the output let go because its destination could not keep up (oldest first), so far.
    public var droppedFrames: Int
    /// Whether the output had been live before (so `live` reads "is back").
    public var wasLiveBefore: Bool

    /// "Streaming to radio stopped: the server refused the password."
    public var sentence: String {
        switch state {
        case .live:
            return wasLiveBefore ? "Streaming to \(destination) is back." : "Streaming to \(destination) started."
        case .retrying(let error): return "Streaming to \(destination) stopped: \(error.reason)."
        case .closed:
            guard droppedFrames > 0 else { return "Streaming to \(destination) ended." }
            let seconds = Double(droppedFrames) * Double(AudioFormat.frameMilliseconds) / 1_000
            return "Streaming to \(destination) ended; \(droppedFrames) frames (\(seconds) s) were dropped "
                + "while it could not keep up."
        }
    }
}

/// A flag a blocked library call checks to give up at once, set when the output closes.
public final class StreamInterrupt: Sendable {
    private let flag = Atomic<Bool>(false)
    public init() {}
    public var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

/// The part of a live output that speaks one protocol: made afresh for every connection attempt, used only on
/// the output's own thread.
public protocol StreamSink: AnyObject {
    /// Connects (or opens the files) and writes the stream's header.
    func open() throws(StreamError)
    /// Encodes and sends one 20 ms mono frame.
    func send(_ frame: [Int16]) throws(StreamError)
    /// Ends the stream cleanly where it can; after a failure it only releases what it holds.
    func finish()
}

/// How long a live output waits before trying a destination again.
public struct StreamBackoff: Sendable, Equatable {
    public var first: Duration
    public var longest: Duration

    /// The first retry after half a second, doubling to at most 4 s: a destination that comes back is streamed
    /// to again within 4 s and a connection's time.
    public static let standard = StreamBackoff(first: .milliseconds(500), longest: .seconds(4))

    public init(first: Duration, longest: Duration) {
        self.first = first
        self.longest = longest
    }

    /// The wait before attempt `failures + 1`.
    public func delay(afterFailures failures: Int) -> Duration {
        var delay = first
        for _ in 1..<max(1, failures) where delay < longest { delay = delay * 2 }
        return min(delay, longest)
    }
}

/// A `MixOutput` that carries the room to one live destination off the mixing thread: `write` only puts the frame
/// on a bounded queue (dropping the oldest, counted, when the destination cannot keep up), and the output's own
/// thread connects, sends, and reconnects with backoff, reporting each change of state once.
public final class LiveOutput: MixOutput, Sendable {
    /// The destination's name, as reports show it.
    public let name: String
    /// Frames the queue holds at most: 5 s of the room.
    public static let queueFrames = 250

    private struct Shared {
        var queue: [[Int16]] = []
        var connected = false
        var stopping = false
        var offered = 0
        var sent = 0
        var dropped = 0
        var notSentWhileDown = 0
    }

    private let shared = Mutex(Shared())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let interrupt = StreamInterrupt()
    private let capacity: Int

    /// Starts the output's thread; `makeSink` makes the protocol's side for each attempt, and `report` is called on
    /// the output's thread at each change of state.
    public init(
        name: String, capacity: Int = LiveOutput.queueFrames, backoff: StreamBackoff = .standard,
        makeSink: @escaping @Sendable (StreamInterrupt) -> any StreamSink,
        report: @escaping @Sendable (StreamReport) -> Void
    ) {
        self.name = name
        self.capacity = max(1, capacity)
        let threadName = "stream " + name.prefix(8)
        startThread(named: String(threadName)) { [self] in
            run(backoff: backoff, makeSink: makeSink, report: report)
            finished.signal()
        }
    }

    /// Frames dropped so far because the destination could not keep up.
    public var droppedFrames: Int { shared.withLock { $0.dropped } }
    /// Frames not sent so far because the destination was down (the stream resumes live, without them).
    public var framesNotSentWhileDown: Int { shared.withLock { $0.notSentWhileDown } }
    /// Frames handed to `write` so far, before `close`.
    public var offeredFrames: Int { shared.withLock { $0.offered } }
    /// Frames the destination's sink took so far (encoded and sent, or queued in its library to be).
    public var sentFrames: Int { shared.withLock { $0.sent } }

    public func write(_ frame: [Int16], offset: Int64) throws {
        let queued = shared.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.offered += 1
            guard state.connected else {
                state.notSentWhileDown += 1
                return false
            }
            if state.queue.count >= capacity {
                state.queue.removeFirst()
                state.dropped += 1
            }
            state.queue.append(frame)
            return true
        }
        if queued { wake.signal() }
    }

    /// Sends what is queued, ends the stream and waits for the thread (at most 5 s, then it interrupts the
    /// destination's calls and waits 2 s more).
    public func close() throws {
        let already = shared.withLock { state -> Bool in
            defer { state.stopping = true }
            return state.stopping
        }
        guard !already else { return }
        wake.signal()
        if finished.wait(timeout: .now() + .seconds(5)) == .timedOut {
            interrupt.set()
            wake.signal()
            _ = finished.wait(timeout: .now() + .seconds(2))
        }
    }

    private var stopping: Bool { shared.withLock { $0.stopping } }

    private func run(
        backoff: StreamBackoff, makeSink: @Sendable (StreamInterrupt) -> any StreamSink,
        report: @Sendable (StreamReport) -> Void
    ) {
        var last: StreamState?
        var wasLive = false
        var failures = 0
        func tell(_ state: StreamState) {
            guard state != last else { return }
            if case .retrying(let now) = state, case .retrying(let before) = last, now.isSameTrouble(as: before) {
                return
            }
            last = state
            report(StreamReport(destination: name, state: state, droppedFrames: droppedFrames, wasLiveBefore: wasLive))
            if state == .live { wasLive = true }
        }
        while !stopping {
            let sink = makeSink(interrupt)
            do {
                try sink.open()
            } catch {
                sink.finish()
                failures += 1
                tell(.retrying(error))
                pause(backoff.delay(afterFailures: failures))
                continue
            }
            failures = 0
            shared.withLock { $0.connected = true }
            tell(.live)
            if let error = pump(sink) {
                shared.withLock {
                    $0.connected = false
                    $0.queue.removeAll()
                }
                sink.finish()
                failures += 1
                tell(.retrying(error))
                pause(backoff.delay(afterFailures: failures))
                continue
            }
            sink.finish()
        }
        tell(.closed)
    }

    /// Waits `delay` before the next attempt, or less when the output closes (close wakes the thread; writes do
    /// not while the destination is down).
    private func pause(_ delay: Duration) {
        while wake.wait(timeout: .now()) == .success {}
        guard !stopping else { return }
        _ = wake.wait(timeout: .now() + .nanoseconds(Int(delay.inNanoseconds)))
    }

    /// Sends queued frames until the output closes (nil, everything sent) or the destination fails.
    private func pump(_ sink: any StreamSink) -> StreamError? {
        while true {
            let (frames, stop) = shared.withLock { state -> ([[Int16]], Bool) in
                var frames: [[Int16]] = []
                swap(&frames, &state.queue)
                return (frames, state.stopping)
            }
            for frame in frames {
                do { try sink.send(frame) } catch { return error }
                shared.withLock { $0.sent += 1 }
            }
            if stop { return nil }
            if frames.isEmpty { _ = wake.wait(timeout: .now() + .milliseconds(100)) }
        }
    }
}
