import AudioCodec
import AudioCore
import Foundation
import Platform
import Synchronization

/// What a file played into the room is, and how far it has played.
public struct NowPlaying: Sendable, Equatable {
    /// The file's title (its TITLE comment, or its name without the extension).
    public var title: String
    /// WAV or Ogg Opus.
    public var format: SoundFileReader.Format
    /// Whole seconds sent so far.
    public var position: Int
    /// The file's length in whole seconds, when known.
    public var length: Int?
}

/// A sound file played into the room through the send path, beside the microphone.
///
/// ``play(_:)`` opens the file at once (so a file that cannot be played is refused before anything plays), then
/// a decoding thread of its own reads it as 48 kHz mono into a lock-free ring of one second. The media thread
/// takes one frame at a time from the ring (``take(into:)``): it never allocates, decodes or waits.
///
/// A new file, or ``stop()``, first ends the decoding thread of the old one (it never waits longer than a
/// ring's sleep, 10 ms); the media thread then drops whatever of the old file is still in the ring before the
/// new thread writes a sample: each file is a generation, and the ring holds one generation at a time.
public final class FilePlayer: Sendable {
    /// The ring between the decoding thread and the media thread: one second.
    static let ringSamples = AudioFormat.sampleRate

    private let ring = SampleRing(capacity: FilePlayer.ringSamples)
    /// Bumped by every ``play(_:)`` and ``stop()``.
    private let generation = Atomic<Int>(0)
    /// The generation the media thread has emptied the ring for.
    private let flushed = Atomic<Int>(0)
    /// The generation whose file is playing (decoding or still in the ring); -1 for none.
    private let active = Atomic<Int>(-1)
    /// Samples of the playing generation taken by the media thread.
    private let played = Atomic<Int>(0)
    private let control = Mutex(Control())
    private let onFinish: @Sendable (String) -> Void

    private struct Control: @unchecked Sendable {
        // `@unchecked` for the thread; the struct only lives inside the mutex.
        var current: (title: String, format: SoundFileReader.Format, length: Int?)?
        var decoderDone: DispatchSemaphore?
    }

    /// A player; `onFinish` is called with the title when a file has played to its end (on the decoding thread),
    /// not when it is stopped.
    public init(onFinish: @escaping @Sendable (String) -> Void = { _ in }) {
        self.onFinish = onFinish
    }

    /// Opens the file at `path` and starts playing it in place of whatever played; an unreadable or unknown file
    /// is refused with the reason, and what played goes on.
    @discardableResult
    public func play(_ path: String) throws(SoundFileError) -> NowPlaying {
        let reader = try SoundFileReader(path: path)
        endDecoder()
        let mine = generation.add(1, ordering: .acquiringAndReleasing).newValue
        played.store(0, ordering: .relaxed)
        active.store(mine, ordering: .releasing)
        let done = DispatchSemaphore(value: 0)
        let length = reader.sampleCount.map { $0 / AudioFormat.sampleRate }
        let flag = StopFlag()
        control.withLock { control in
            control.current = (reader.title, reader.format, length)
            control.decoderDone = done
        }
        stopFlags.withLock { $0 = flag }
        let handOff = ReaderHandOff(reader)
        startThread(named: "clubroom-file") { [self] in
            decode(handOff.reader, generation: mine, stop: flag)
            done.signal()
        }
        return NowPlaying(title: reader.title, format: reader.format, position: 0, length: length)
    }

    /// Stops what plays; false when nothing played.
    @discardableResult
    public func stop() -> Bool {
        let wasPlaying = nowPlaying != nil
        endDecoder()
        generation.add(1, ordering: .acquiringAndReleasing)
        active.store(-1, ordering: .releasing)
        control.withLock { $0.current = nil }
        return wasPlaying
    }

    /// What plays now, and how far; nil when nothing plays.
    public var nowPlaying: NowPlaying? {
        guard let current = control.withLock({ $0.current }) else { return nil }
        let position = played.load(ordering: .relaxed) / AudioFormat.sampleRate
        return NowPlaying(title: current.title, format: current.format, position: position, length: current.length)
    }

    // MARK: The media thread

    /// Samples decoded and not yet taken (a lower bound off the media thread): for tests.
    var bufferedSamples: Int { ring.availableToRead }

    /// Whether a file is playing; atomics only, for the media thread.
    var isPlaying: Bool {
        active.load(ordering: .acquiring) == generation.load(ordering: .acquiring)
    }

    /// Media thread only: fills the front of `buffer` with the file's next samples and returns how many, and
    /// whether a file is playing (it may be playing with no sample ready, when the decoder fell behind).
    func take(into buffer: UnsafeMutableBufferPointer<Int16>) -> (count: Int, playing: Bool) {
        let current = generation.load(ordering: .acquiring)
        if flushed.load(ordering: .relaxed) != current {
            ring.discard(count: ring.availableToRead)
            flushed.store(current, ordering: .releasing)
        }
        guard active.load(ordering: .acquiring) == current else { return (0, false) }
        let count = ring.read(into: buffer)
        played.add(count, ordering: .relaxed)
        return (count, true)
    }

    // MARK: The decoding thread

    /// The reader passes to the decoding thread and is used there alone.
    private final class ReaderHandOff: @unchecked Sendable {
        let reader: SoundFileReader
        init(_ reader: SoundFileReader) { self.reader = reader }
    }

    private final class StopFlag: Sendable {
        let raised = Atomic<Bool>(false)
    }

    private let stopFlags = Mutex<StopFlag?>(nil)

    /// Ends the decoding thread, if one runs, and waits for it.
    private func endDecoder() {
        let flag = stopFlags.withLock { flag -> StopFlag? in
            defer { flag = nil }
            return flag
        }
        flag?.raised.store(true, ordering: .releasing)
        let done = control.withLock { control -> DispatchSemaphore? in
            defer { control.decoderDone = nil }
            return control.decoderDone
        }
        done?.wait()
    }

    private func decode(_ reader: SoundFileReader, generation mine: Int, stop: StopFlag) {
        // The ring must be emptied of the previous file before this one is written.
        while flushed.load(ordering: .acquiring) != mine {
            if stop.raised.load(ordering: .acquiring) { return }
            MonotonicClock.sleep(microseconds: 10_000)
        }
        var chunk = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame * 5)
        var ended = false
        while !stop.raised.load(ordering: .acquiring) {
            if !ended {
                let count = chunk.withUnsafeMutableBufferPointer { buffer in (try? reader.read(into: buffer)) ?? 0 }
                if count == 0 {
                    ended = true
                    continue
                }
                var offset = 0
                while offset < count {
                    if stop.raised.load(ordering: .acquiring) { return }
                    let written = chunk.withUnsafeBufferPointer { samples in
                        ring.write(UnsafeBufferPointer(rebasing: samples[offset..<count]))
                    }
                    offset += written
                    if offset < count { MonotonicClock.sleep(microseconds: 10_000) }
                }
            } else if ring.availableToWrite >= ring.capacity {
                // Played out to the end: the file is over unless it was replaced or stopped meanwhile.
                guard active.compareExchange(expected: mine, desired: -1, ordering: .acquiringAndReleasing).exchanged
                else { return }
                let title = control.withLock { control -> String? in
                    defer { control.current = nil }
                    return control.current?.title
                }
                if let title { onFinish(title) }
                return
            } else {
                MonotonicClock.sleep(microseconds: 10_000)
            }
        }
    }
}
