import AudioCodec
import AudioCore
import AudioDevices
import AudioEngine
import Synchronization
import Testing

/// The threaded engine with paced virtual devices: one engine speaking a tone, another hearing and recording
/// it; the real-time rule on the device threads; a listener that never opens a microphone; device trouble
/// reported in words.
@Suite(.serialized) struct EngineTests {
    /// Runs a speaking engine into a listening engine for `frames` of the listener's playout and returns the
    /// listener's recording and the allocations counted on the device threads.
    func speakToListener(frames: Int, directory: TemporaryDirectory) throws -> (recording: [Int16], allocations: Int) {
        let counter = AllocationCounter()
        let streamOptions = StreamOptions(realTimePriority: false, onAudioThreadStart: counter.countOnThisThread)
        let recording = directory.file("heard-\(frames).wav")
        let listener = try AudioEngine(
            configuration: AudioEngineConfiguration(
                input: .silence, output: .null, recordPath: recording, streamOptions: streamOptions))
        let sequence = Atomic<UInt16>(0)
        var send = SendPipeline.Configuration.suggested(for: .tone(hertz: 440))
        send.initialTimestamp = 77
        let speaker = try AudioEngine(
            configuration: AudioEngineConfiguration(
                input: .tone(hertz: 440), output: .null, send: send, streamOptions: streamOptions),
            onEncoded: { packet in
                let number = sequence.add(1, ordering: .relaxed).oldValue
                listener.receive(
                    speaker: "ana", ssrc: 9, sequence: number, timestamp: packet.timestamp, payload: packet.payload)
            })
        try listener.start()
        try speaker.start()
        try speaker.startCapture()
        #expect(waitUntil { (listener.speakerStatistics.first?.packetsReceived ?? 0) >= frames })
        #expect(speaker.microphoneLevel.dBov == 15)
        speaker.stop()
        listener.stop()
        #expect(speaker.sendStatistics.packetsSent >= frames)
        return (try readWAV(recording), counter.count)
    }

    @Test func aSpeakerIsHeardAndTheDeviceThreadsDoNotAllocate() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // The first run fills the runtime's lazily made metadata (a one-off per process); the second counts.
        _ = try speakToListener(frames: 20, directory: directory)
        let (recording, allocations) = try speakToListener(frames: 60, directory: directory)
        #expect(allocations == 0)
        #expect(recording.count >= 60 * 960)
        // The recording starts with silence before the first packet and ends with the fade after the speaker
        // stopped; the tone fills the 100 ms windows in between.
        let windows = stride(from: 0, to: recording.count - 4_800, by: 4_800).map {
            Array(recording[$0..<($0 + 4_800)])
        }
        let toneWindows = windows.filter { ToneAnalysis.power(of: $0, frequency: 440) > 0.01 }
        #expect(toneWindows.count >= 8)
        let middle = try #require(toneWindows.dropFirst().first)
        #expect(ToneAnalysis.dominantFrequency(of: middle, in: 100...2_000).frequency == 440)
        // ToneInput's default amplitude is 8000, about -12 dBFS: its power is (8000/32767)², its level 15 dBov.
        // The median window, so that one concealed packet on a busy machine does not decide it.
        let powers = toneWindows.map { ToneAnalysis.power(of: $0, frequency: 440) }.sorted()
        let power = powers[powers.count / 2]
        #expect(power > 0.0596 * 0.8 && power < 0.0596 * 1.25, "\(powers)")
    }

    @Test func aListenerNeverOpensTheMicrophone() throws {
        let opened = Atomic<Int>(0)
        let listener = try AudioEngine(
            configuration: AudioEngineConfiguration(
                output: .null,
                inputOpener: { () throws(AudioDeviceError) in
                    opened.add(1, ordering: .relaxed)
                    return SilenceInput()
                }, streamOptions: StreamOptions(realTimePriority: false)))
        try listener.start()
        #expect(waitUntil { (listener.deviceStatistics.playback?.periods ?? 0) >= 10 })
        #expect(listener.deviceStatistics.capture == nil)
        #expect(!listener.isCapturing)
        listener.stop()
        #expect(opened.load(ordering: .relaxed) == 0)
    }

    @Test func noLoudspeakerIsSaidOnceAndListeningGoesOn() throws {
        let statuses = Collected<EngineStatus>()
        let engine = try AudioEngine(
            configuration: AudioEngineConfiguration(
                output: .alsa("clubroom-no-such-device"), streamOptions: StreamOptions(realTimePriority: false)),
            onStatus: statuses.append)
        try engine.start()
        #expect(waitUntil { (engine.deviceStatistics.playback?.periods ?? 0) >= 20 })
        engine.stop()
        #expect(statuses.all.count == 1)
        let message = try #require(statuses.all.first?.message)
        #expect(
            message.hasPrefix(
                "No speaker (“clubroom-no-such-device” not found); using “null”. Choose one with --output NAME "
                    + "(see clubroom devices). Details: audio device “clubroom-no-such-device” was not found"))
    }

    @Test func aMicrophoneThatGoesAwayIsReportedAndReopened() throws {
        let statuses = Collected<EngineStatus>()
        let opens = Atomic<Int>(0)
        let engine = try AudioEngine(
            configuration: AudioEngineConfiguration(
                input: .alsa("flaky"), output: .null,
                inputOpener: { () throws(AudioDeviceError) in
                    let attempt = opens.add(1, ordering: .relaxed).newValue
                    return FailingInput(failAfter: attempt == 1 ? 10 : Int.max)
                }, send: SendPipeline.Configuration(voiceProcessing: false),
                streamOptions: StreamOptions(realTimePriority: false)),
            onStatus: statuses.append)
        try engine.start()
        try engine.startCapture()
        #expect(waitUntil { statuses.all.count >= 2 })
        engine.stop()
        #expect(
            statuses.all.prefix(2).map(\.message) == [
                "Microphone “flaky” stopped working (audio device “flaky” went away (No such device)); trying to "
                    + "reopen it.",
                "Microphone “flaky” is back.",
            ])
    }

    @Test func xrunsAreReportedInWords() {
        #expect(
            EngineStatus.xruns(.playback, device: "default", count: 3).message
                == "Speaker “default” could not keep up 3 times (what you hear had gaps); the machine may be too busy.")
        #expect(
            EngineStatus.xruns(.capture, device: "hw:1", count: 1).message
                == "Microphone “hw:1” could not keep up once (some of your voice was lost); the machine may be too "
                + "busy.")
    }

    @Test func aWAVFileThatDoesNotReadIsAnErrorAtOnce() throws {
        let engine = try AudioEngine(
            configuration: AudioEngineConfiguration(input: .wav(path: "/nonexistent/speech.wav"), output: .null))
        #expect(throws: AudioEngineError.device(.file(path: "/nonexistent/speech.wav", problem: "cannot be read"))) {
            try engine.startCapture()
        }
        #expect(!engine.isCapturing)
    }
}

/// A paced microphone that fails after some periods, as an unplugged headset does.
final class FailingInput: AudioInput {
    let name = "flaky"
    private var remaining: Int
    private let silence = SilenceInput()

    init(failAfter periods: Int) { remaining = periods }

    func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        guard remaining > 0 else { throw .disconnected(device: name, code: -19) }
        remaining -= 1
        return try silence.read(into: buffer)
    }
}
