import Synchronization

/// A microphone whose sound is handed to it while it runs: silence until `play` gives it samples, which it sends
/// once from the start, then silence again. For clients that speak now and then, such as the demo's bots.
///
/// The media thread takes one frame at a time under a lock held only for that copy; `play` and `stop` swap the
/// samples under the same lock, so the media thread never allocates or frees them.
public final class MicrophoneFeed: Sendable, Equatable {
    private let state = Mutex<(samples: [Int16], position: Int)>(([], 0))

    public init() {}

    /// Starts sending `samples` (48 kHz mono) from their beginning, in place of whatever was playing.
    public func play(_ samples: [Int16]) {
        let previous = state.withLock { state -> [Int16] in
            defer { state = (samples, 0) }
            return state.samples
        }
        withExtendedLifetime(previous) {}
    }

    /// Silence from the next frame on.
    public func stop() {
        play([])
    }

    /// Whether samples remain to be sent.
    public var isPlaying: Bool {
        state.withLock { $0.position < $0.samples.count }
    }

    /// Fills `frame` with the next samples, and silence after the end.
    func fill(_ frame: inout [Int16]) {
        state.withLock { state in
            let count = min(frame.count, state.samples.count - state.position)
            for index in 0..<count { frame[index] = state.samples[state.position + index] }
            for index in max(0, count)..<frame.count { frame[index] = 0 }
            state.position += max(0, count)
        }
    }

    /// Two feeds are the same only when they are the same object.
    public static func == (lhs: MicrophoneFeed, rhs: MicrophoneFeed) -> Bool { lhs === rhs }
}
