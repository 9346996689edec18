import AudioCore
import AudioDevices
import BenchmarkSupport
import ClientAudio
import Foundation
import Platform
import ServerBenchmarks
import Synchronization

/// Mouth-to-ear through real, real-time paced ALSA devices and a real room server: PulseAudio null sinks
/// reached by ALSA's `pulse` plugin. Clicks are played into sink `mouth`; the speaking client (the room
/// screen's sound, as in ``PathLatencyBenchmark``) captures `mouth.monitor` and sends through the server; the
/// listening client plays into sink `ear`; the rig captures `ear.monitor` and finds the clicks. The rig's own
/// path (play into a sink, capture its monitor) is measured alone first and taken off, so what remains is the
/// two clients and the server plus the speaker's capture device and the listener's playback device, with their
/// buffering.
public enum PulseLatencyBenchmark {
    /// Why the measurement could not run.
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    /// The figures.
    public struct Result: Sendable, Equatable {
        /// The rig's own loop (play into a sink, capture its monitor), median in ms.
        public var rigMilliseconds: Double
        /// Mouth-to-ear with the rig's loop taken off, per click, in ms.
        public var latencies: [Double]
        /// Clicks played (after the warm-up).
        public var clicksSent: Int

        /// The `fraction` quantile (0...1) of the delays, nearest rank; 0 with none.
        public func percentile(_ fraction: Double) -> Double { BenchmarkSupport.percentile(latencies, fraction) }
    }

    /// Runs the rig alone for a few seconds, then through the server for `seconds`.
    public static func run(seconds: Int) throws -> Result {
        guard let pulseaudio = PrivatePulseAudio.executablePath() else {
            throw Unavailable(description: "pulseaudio is not installed (Debian: pulseaudio, libasound2-plugins)")
        }
        let directory = NSTemporaryDirectory() + "clubroom-latency-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = try PrivatePulseAudio(executable: pulseaudio, directory: directory, sinks: ["mouth", "ear"])
        defer { daemon.stop() }
        guard daemon.isListening() else {
            throw Unavailable(description: "the PulseAudio daemon did not start")
        }
        let socket = daemon.socket
        let configuration = ["mouth", "ear"].map { sink in
            """
            pcm.\(sink)_play { type pulse; server "unix:\(socket)"; device "\(sink)" }
            pcm.\(sink)_monitor { type pulse; server "unix:\(socket)"; device "\(sink).monitor" }
            """
        }.joined(separator: "\n")
        let alsa = ALSAOptions(configuration: configuration)

        // The rig alone: clicks into `mouth`, found in `mouth.monitor`.
        let rig = try measure(seconds: 5, alsa: alsa, captureDevice: "mouth_monitor", between: nil)
        guard !rig.delays.isEmpty else { throw Unavailable(description: "no click came back through the null sink") }
        let rigMedian = rig.delays.sorted()[rig.delays.count / 2]
        // Through the clients and the server.
        let total = try measure(seconds: seconds, alsa: alsa, captureDevice: "ear_monitor", between: alsa)
        return Result(
            rigMilliseconds: rigMedian / 1000, latencies: total.delays.map { ($0 - rigMedian) / 1000 },
            clicksSent: total.sent)
    }

    /// Plays clicks into `mouth_play` and finds them in `captureDevice`; with `between`, a speaking client
    /// captures `mouth_monitor` and sends through a room server to a listening client that plays into
    /// `ear_play`. Returns the delays in µs.
    static func measure(
        seconds: Int, alsa: ALSAOptions, captureDevice: String, between: ALSAOptions?
    ) throws
        -> (delays: [Double], sent: Int)
    {
        let clicks = ClickSource()
        let finder = ClickSink()
        // As in a session: real-time priority is asked for, and declined for the pulse plugin's PCMs.
        let options = StreamOptions()
        var room: BenchServer?
        var clients: [ScreenClient] = []
        defer {
            for client in clients { client.close() }
            room?.shutdown()
        }
        if let between {
            let server = try BenchServer(room: "bench", media: true)
            room = server
            // The send path is a person's without the voice processing: gain control would lift the rig's quiet
            // tone above the click detector's threshold, and voice processing works frame by frame, adding no
            // delay.
            let listener = try ScreenClient(
                room: server, identity: "listener", role: "speaker", relay: nil,
                settings: RoomAudioSettings(
                    input: .silence, output: .alsa("ear_play"), echoCancellation: false, volumesPath: nil),
                devices: RoomAudioDevices(
                    openInput: { request throws(AudioDeviceError) in
                        SilenceInput(name: "silence", pacing: request.pacing)
                    },
                    openOutput: { period throws(AudioDeviceError) in
                        var options = between
                        options.periodMilliseconds = period.periodMilliseconds
                        return try ALSAOutput(name: "ear_play", options: options)
                    }
                ))
            clients.append(listener)
            let speaker = try ScreenClient(
                room: server, identity: "speaker", role: "speaker", relay: nil,
                settings: RoomAudioSettings(
                    input: .alsa("mouth_monitor"), output: .null, echoCancellation: false,
                    voiceProcessing: false, volumesPath: nil),
                devices: RoomAudioDevices(
                    openInput: { period throws(AudioDeviceError) in
                        var options = between
                        options.periodMilliseconds = period.periodMilliseconds
                        return try ALSAInput(name: "mouth_monitor", options: options)
                    },
                    openOutput: { request throws(AudioDeviceError) in
                        NullOutput(name: "null", pacing: request.pacing)
                    }))
            clients.append(speaker)
            try listener.client.join()
            try speaker.client.join()
            // The listener is on stage, its microphone open and muted: its devices run as a speaker's.
            listener.audio.setCapturing(true)
            try speaker.speak()
        }
        let statuses = Mutex<[String]>([])
        let record: @Sendable (DeviceStatus) -> Void = { status in statuses.withLock { $0.append(status.message) } }
        let detector = AudioStream.capture(
            alsaDevice: captureDevice, alsaOptions: alsa, into: finder, options: options, onStatus: record)
        let player = AudioStream.playback(
            alsaDevice: "mouth_play", alsaOptions: alsa, from: clicks, options: options, onStatus: record)
        detector.start()
        player.start()
        MonotonicClock.sleep(microseconds: Int64(seconds) * 1_000_000)
        player.stop()
        detector.stop()
        if let problem = statuses.withLock({ $0.first }) { throw Unavailable(description: problem) }

        let sent = clicks.onsets.values
        let received = finder.onsets.values
        guard let first = sent.first else { return ([], 0) }
        let counted = sent.filter { $0 - first >= 1_000_000 && $0 < sent.last! }
        return (clickDelays(sent: counted, found: received).map { $0 * 1000 }, counted.count)
    }
}

/// The rig's loudspeaker feed: a quiet tone with a click every 500 ms; notes when each click was handed to the
/// device. Runs on a playback thread: no allocation.
private final class ClickSource: SampleSource, @unchecked Sendable {
    // `@unchecked`: only the playback thread calls `read`; `onsets` is read after the stream has stopped.
    let onsets = EventTimes()
    private var signal = ClickSignal()

    func read(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int {
        let now = MonotonicClock.microseconds()
        if let offset = signal.fill(buffer) {
            onsets.append(now + AudioFormat.microseconds(samples: Int64(offset)))
        }
        return buffer.count
    }
}

/// The rig's microphone: finds clicks in what the capture thread delivers and notes when each was heard.
private final class ClickSink: SampleSink, @unchecked Sendable {
    // `@unchecked`: only the capture thread calls `write`; `onsets` is read after the stream has stopped.
    let onsets = EventTimes()
    private var detector = ClickDetector()

    func write(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        // The period's last sample arrived now; the first one a period earlier.
        let periodStart = MonotonicClock.microseconds() - AudioFormat.microseconds(samples: Int64(samples.count))
        let start = detector.position
        let onsets = onsets
        detector.process(samples) { position in
            onsets.append(periodStart + AudioFormat.microseconds(samples: Int64(position - start)))
        }
        return samples.count
    }
}
