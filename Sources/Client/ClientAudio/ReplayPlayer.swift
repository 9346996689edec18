import AudioCodec
import AudioCore
import AudioDevices
import Foundation
import Platform
import Synchronization

/// Plays a recording (an Ogg Opus file) to a loudspeaker, for `clubroom replay`: a thread of its own decodes
/// 10 ms at a time with libopusfile and writes it to the output, whose pace (a sound card's, or a virtual
/// device's real-time pacing) sets the replay's. Pausing stops writing; seeking moves the decoder. Where it is
/// (`position`) counts what has been written.
///
/// At the end of the file the thread waits, as when paused, for a seek or a stop. A loudspeaker that fails ends
/// the replay with `failure` set.
public final class ReplayPlayer: Sendable {
    /// The length of the recording, in milliseconds (0 when the file does not say). A damaged file's claim may be
    /// absurd; it is computed without overflow, and replay's screen takes no more than a year of it.
    public let lengthMilliseconds: Int64

    /// Samples in a millisecond (48 kHz divides evenly): positions are converted by dividing and multiplying by
    /// it, within bounds, so that no claim of a file and no seek can overflow.
    private static let samplesPerMillisecond = Int64(AudioFormat.sampleRate / 1000)
    /// The furthest a seek goes, in milliseconds: past it a sample count would not fit.
    private static let furthestMilliseconds = Int64.max / samplesPerMillisecond

    private struct Control {
        var paused = false
        var seekTarget: Int64?
        var stopping = false
        var positionSamples: Int64 = 0
        var ended = false
        var finished = false
        var failure: String?
    }

    private let control = Mutex(Control())

    /// What the thread owns: the file and the loudspeaker, used by it alone once started.
    private final class Parts: @unchecked Sendable {
        let file: OggOpusFile
        let output: any AudioOutput
        init(file: OggOpusFile, output: any AudioOutput) {
            self.file = file
            self.output = output
        }
    }

    private let parts: Parts

    /// Opens the recording at `path` (a file that is not Ogg Opus is refused here) to play to `output`.
    public init(path: String, output: any AudioOutput) throws(SoundFileError) {
        let file: OggOpusFile
        do {
            file = try OggOpusFile(path: path)
        } catch {
            throw SoundFileError(path: path, problem: error.problem)
        }
        parts = Parts(file: file, output: output)
        lengthMilliseconds = max(0, Int64(clamping: file.sampleCount ?? 0)) / Self.samplesPerMillisecond
    }

    /// Starts playing from the beginning.
    public func start() {
        let parts = self.parts
        startThread(named: "replay") { [self] in run(parts) }
    }

    /// Where the replay is, in milliseconds of audio written to the loudspeaker.
    public var position: Int64 {
        control.withLock { $0.positionSamples } / Self.samplesPerMillisecond
    }

    /// Whether the whole file has been played (until the next seek).
    public var ended: Bool { control.withLock { $0.ended } }

    /// Whether the thread has stopped (after `stop()`, or when the loudspeaker failed).
    public var finished: Bool { control.withLock { $0.finished } }

    /// Why the replay stopped by itself: the loudspeaker or the file failed.
    public var failure: String? { control.withLock { $0.failure } }

    public func pause() { control.withLock { $0.paused = true } }
    public func resume() { control.withLock { $0.paused = false } }

    /// Goes on from `milliseconds` into the recording.
    public func seek(to milliseconds: Int64) {
        let target = min(max(0, milliseconds), Self.furthestMilliseconds)
        control.withLock {
            $0.seekTarget = target
            $0.positionSamples = target * Self.samplesPerMillisecond
            $0.ended = false
        }
    }

    /// Stops the thread and waits (at most a period) until it has; the loudspeaker is closed.
    public func stop() {
        control.withLock { $0.stopping = true }
        while !finished { sleepMilliseconds(5) }
    }

    private func run(_ parts: Parts) {
        let period = AudioFormat.sampleRate / 100
        let buffer = UnsafeMutableBufferPointer<Int16>.allocate(capacity: period)
        buffer.initialize(repeating: 0)
        defer {
            buffer.deallocate()
            (parts.output as? WAVFileOutput)?.close()
            control.withLock { $0.finished = true }
        }
        while true {
            let (stopping, paused, seek, ended) = control.withLock { control in
                let seek = control.seekTarget
                control.seekTarget = nil
                return (control.stopping, control.paused, seek, control.ended)
            }
            if stopping { return }
            if let seek {
                do {
                    try parts.file.seek(toSample: Int(seek * Self.samplesPerMillisecond))
                } catch {
                    // Past the end (or a file that cannot seek): the replay is at its end.
                    control.withLock {
                        $0.ended = true
                        $0.positionSamples = self.lengthMilliseconds * Self.samplesPerMillisecond
                    }
                    continue
                }
            }
            if paused || ended {
                sleepMilliseconds(10)
                continue
            }
            let count: Int
            do {
                count = try parts.file.read(into: buffer)
            } catch {
                control.withLock {
                    $0.failure = "the recording could not be read further (\(error.problemDescription))"
                }
                return
            }
            if count == 0 {
                control.withLock { $0.ended = true }
                continue
            }
            do {
                _ = try parts.output.write(UnsafeBufferPointer(rebasing: buffer[0..<count]))
            } catch {
                control.withLock { $0.failure = "the loudspeaker stopped working (\(error))" }
                return
            }
            control.withLock { control in
                // A seek made while this period was written already set the position.
                if control.seekTarget == nil { control.positionSamples += Int64(count) }
            }
        }
    }
}

private func sleepMilliseconds(_ milliseconds: Int) {
    var time = timespec(tv_sec: 0, tv_nsec: milliseconds * 1_000_000)
    nanosleep(&time, nil)
}
