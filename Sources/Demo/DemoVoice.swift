import Dispatch
import Foundation
import RoomClient
import Synchronization

/// What a bot says into the room: the demo director starts and stops clips; how they reach the room (a media
/// stream, or nothing) is the voice's business.
public protocol DemoVoice: Sendable {
    /// The media traffic of the bot's session, for `RoomSession(media:)`; nil for a voice that sends nothing.
    var media: (@Sendable (SessionMedia) -> Void)? { get }
    /// The bot's session, once it exists (it is made after its voice, since it needs `media`).
    func attach(_ session: RoomSession)
    /// Starts saying the clip at `path`; calls `done` once it has all been said, unless `stop()` came first.
    func play(path: String, clip: DemoClip, done: @escaping @Sendable () -> Void)
    /// Stops at once, mid-clip if need be.
    func stop()
    /// Releases what the voice holds; it is not used again.
    func close()
}

/// Makes the voice of the bot `identity`.
public typealias DemoVoiceFactory = @Sendable (_ identity: String) -> any DemoVoice

/// A voice that sends no audio and only takes the clip's time: the stage's turn-taking, hands and chat still run,
/// for builds and rooms without media.
public final class TimedVoice: DemoVoice {
    /// Counts clips, so the timer of a stopped clip does not end the next one.
    private let generation = Atomic<Int>(0)

    public init() {}

    public var media: (@Sendable (SessionMedia) -> Void)? { nil }

    public func attach(_ session: RoomSession) {}

    public func play(path: String, clip: DemoClip, done: @escaping @Sendable () -> Void) {
        let mine = generation.add(1, ordering: .acquiringAndReleasing).newValue
        DispatchQueue.global().asyncAfter(deadline: .now() + clip.duration) { [self] in
            if generation.load(ordering: .acquiring) == mine { done() }
        }
    }

    public func stop() {
        generation.add(1, ordering: .acquiringAndReleasing)
    }

    public func close() {
        stop()
    }
}
