import AudioCodec
import AudioCore
import ClientAudio
import Dispatch
import Foundation
import RoomClient
import Synchronization

/// The demo's clips as 48 kHz mono samples, read and resampled once when the demo starts, so starting a line
/// costs nothing.
public final class DemoClipAudio: Sendable {
    private let samples: [String: [Int16]]

    /// Reads every clip of `library`.
    public init(library: DemoClipLibrary) throws(DemoError) {
        var samples: [String: [Int16]] = [:]
        for clip in library.clips {
            let path = library.path(of: clip)
            do {
                samples[clip.file] = try SoundFile.readMono48k(path: path)
            } catch {
                throw DemoError(place: path, problem: error.problemDescription)
            }
        }
        self.samples = samples
    }

    /// The samples of `clip`; empty for a clip that was not loaded.
    public func samples(of clip: DemoClip) -> [Int16] {
        samples[clip.file] ?? []
    }
}

/// A microphone that says a clip when told and is silent otherwise: while it has nothing to say it offers no
/// audio, so no packets are sent and the speaker's level falls.
///
/// The media thread takes one frame at a time under a lock held only for that copy; `play` and `stop` swap the
/// samples under the same lock and release the old ones outside it, so the media thread never allocates or frees.
final class ClipFeed: Sendable {
    private let state = Mutex<(samples: [Int16], position: Int)>(([], 0))

    /// Starts saying `samples` (48 kHz mono) from their beginning, in place of whatever was being said.
    func play(_ samples: [Int16]) {
        let previous = state.withLock { state -> [Int16] in
            defer { state = (samples, 0) }
            return state.samples
        }
        withExtendedLifetime(previous) {}
    }

    /// Silence from the next frame on.
    func stop() {
        play([])
    }

    /// Whether samples remain to be said.
    var isPlaying: Bool {
        state.withLock { $0.position < $0.samples.count }
    }

    /// Fills `frame` with the next samples (silence after the clip's end); false when there is nothing to say.
    func fill(_ frame: UnsafeMutableBufferPointer<Int16>) -> Bool {
        state.withLock { state in
            let count = min(frame.count, state.samples.count - state.position)
            guard count > 0 else { return false }
            for index in 0..<count { frame[index] = state.samples[state.position + index] }
            for index in count..<frame.count { frame[index] = 0 }
            state.position += count
            return true
        }
    }
}

/// A bot's voice over the media plane: its session's `media` offer starts the client's media (through a
/// `ClientMediaSlot`: Opus in SRTP, UDP or the WebSocket) whose microphone is a clip feed, silent until a clip is played
/// into it. The server measures the audio levels of what it sends, which drive everyone's level bars and the
/// highlighted speaker.
///
/// The session calls `media` on its loop thread and the director calls the rest from any thread.
public final class MediaVoice: DemoVoice {
    private let audio: DemoClipAudio
    private let feed: ClipFeed
    private let mediaSlot: ClientMediaSlot
    /// Counts clips, so the timer of a stopped clip does not end the next one.
    private let generation = Atomic<Int>(0)

    /// A voice that plays the clips of `audio` and reports media failures to `problems`.
    public init(audio: DemoClipAudio, problems: @escaping @Sendable (String) -> Void) {
        self.audio = audio
        let feed = ClipFeed()
        self.feed = feed
        mediaSlot = ClientMediaSlot(
            options: ClientMedia.Options(source: .live(AudioFeed(capture: { frame in feed.fill(frame) }))),
            onFailure: problems)
    }

    public var media: (@Sendable (SessionMedia) -> Void)? {
        { [mediaSlot] media in mediaSlot.handle(media) }
    }

    public func attach(_ session: RoomSession) {
        mediaSlot.attach(session)
    }

    public func play(path: String, clip: DemoClip, done: @escaping @Sendable () -> Void) {
        let samples = audio.samples(of: clip)
        let mine = generation.add(1, ordering: .acquiringAndReleasing).newValue
        feed.play(samples)
        let seconds = Double(samples.count) / Double(AudioFormat.sampleRate)
        finish(after: seconds, generation: mine, checksLeft: 60, done: done)
    }

    /// Calls `done` once the feed has been sent to its end (a busy machine can send it slower than real time, and
    /// the next speaker must not talk over it), or 3 s past its length when no media engine is taking it.
    private func finish(
        after seconds: Double, generation mine: Int, checksLeft: Int, done: @escaping @Sendable () -> Void
    ) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            guard generation.load(ordering: .acquiring) == mine else { return }
            if feed.isPlaying, checksLeft > 0 {
                finish(after: 0.05, generation: mine, checksLeft: checksLeft - 1, done: done)
            } else {
                done()
            }
        }
    }

    public func stop() {
        generation.add(1, ordering: .acquiringAndReleasing)
        feed.stop()
    }

    public func close() {
        stop()
        mediaSlot.close()
    }
}
