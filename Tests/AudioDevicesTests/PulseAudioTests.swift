import AudioDevices
import Foundation
import RoomTesting
import Testing

/// Plays a tone into a PulseAudio null sink through ALSA's `pulse` plugin and records it back from the sink's
/// monitor: a loopback through real, real-time paced devices on a machine without a sound card.
///
/// The test starts a private PulseAudio daemon (its own runtime directory and socket, anonymous access) and
/// stops it afterwards. ALSA reaches it through configuration text naming the socket, so nothing in the
/// process's environment changes. Needs the Debian packages `pulseaudio` and `libasound2-plugins`; without
/// them the test says so and passes.
@Suite(.ownThread) struct PulseAudioTests {
    static func pulsePluginInstalled() -> Bool {
        let directories = [
            "/usr/lib/x86_64-linux-gnu/alsa-lib", "/usr/lib/aarch64-linux-gnu/alsa-lib", "/usr/lib/alsa-lib",
        ]
        return directories.contains { FileManager.default.fileExists(atPath: $0 + "/libasound_module_pcm_pulse.so") }
    }

    /// Runs `body` with a private daemon that has one null sink, `room`, and stops the daemon afterwards; without
    /// PulseAudio or ALSA's pulse plugin, says the `test` is skipped and passes.
    static func withDaemon(for test: String, _ body: (PrivatePulseAudio) throws -> Void) throws {
        guard let executable = PrivatePulseAudio.executablePath(), pulsePluginInstalled() else {
            print("skipping the PulseAudio \(test) test: install pulseaudio and libasound2-plugins to run it")
            return
        }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try PrivatePulseAudio(
            executable: executable, directory: directory.path, sinks: ["room"], highPriority: true)
        defer { daemon.stop() }
        try #require(daemon.isListening())
        try body(daemon)
    }

    @Test func aToneCrossesANullSinkInRealTime() throws {
        try Self.withDaemon(for: "loopback") { daemon in
            let configuration = """
                pcm.room_speaker { type pulse; server "unix:\(daemon.socket)"; device "room" }
                pcm.room_monitor { type pulse; server "unix:\(daemon.socket)"; device "room.monitor" }
                """
            let tone = Signals.tone(frequency: 440, count: 48_000)
            // The other suites run at the same time on a machine that may have two cores: when they starve the
            // devices for a moment, that is an xrun the machine caused, not the path. Up to three tries, so that one
            // free of xruns shows the path keeps real time; the underrun test covers recovering from them.
            var attempt = try loop(tone, configuration: ALSAOptions(configuration: configuration))
            var tries = 1
            while attempt.xruns > 0 && tries < 3 {
                attempt = try loop(tone, configuration: ALSAOptions(configuration: configuration))
                tries += 1
            }

            #expect(attempt.messages.isEmpty, "\(attempt.messages)")
            #expect(!attempt.usedFallback)
            #expect(attempt.xruns == 0, "xruns in each of \(tries) tries")
            let recorded = attempt.recorded
            // Both ends run on the sink's clock: the capture side recorded about as many samples as were played
            // (it started a little earlier and stopped a little later), which an unpaced device would not do.
            let played = attempt.periodsPlayed * 480
            #expect(recorded.count >= played - 480 * 10 && recorded.count <= played + 480 * 50, "\(recorded.count)")
            // The tone arrived: find its loudest second and check its pitch and level.
            let loud = recorded.indices.filter { abs(Int(recorded[$0])) > 4_000 }
            #expect(loud.count > 10_000)
            if let first = loud.first {
                let heard = recorded[first..<min(first + 24_000, recorded.count)]
                #expect(Signals.dominantFrequency(heard, seconds: 0.1) == 440)
                #expect(Signals.rms(heard) > Signals.rms(tone[...]) * 0.7)
            }
        }
    }

    /// What one loopback through the null sink did.
    struct Attempt {
        var recorded: [Int16]
        var periodsPlayed: Int
        var xruns: Int
        var messages: [String]
        var usedFallback: Bool
    }

    /// Plays `tone` into the sink and captures its monitor meanwhile, then half a second of silence.
    func loop(_ tone: [Int16], configuration alsaOptions: ALSAOptions) throws -> Attempt {
        let toSpeaker = TestRing(capacity: 48_000)
        #expect(toSpeaker.write(tone) == tone.count)
        let fromMonitor = TestRing(capacity: 48_000 * 4)
        let log = StatusLog()
        // Real-time priority is asked for, as in a session, and declined for the pulse plugin: its capture polls,
        // and at real-time priority on two cores it can starve the daemon's own threads.
        let options = StreamOptions()
        let capture = AudioStream.capture(
            alsaDevice: "room_monitor", alsaOptions: alsaOptions, into: fromMonitor, options: options,
            onStatus: log.record)
        let playback = AudioStream.playback(
            alsaDevice: "room_speaker", alsaOptions: alsaOptions, from: toSpeaker, options: options,
            onStatus: log.record)
        capture.start()
        playback.start()
        // One second of tone, then half a second of silence for the devices' buffers to empty.
        #expect(waitUntil(limit: 20) { playback.statistics.periods >= 150 })
        #expect(!capture.runsAtRealTimePriority && !playback.runsAtRealTimePriority)
        playback.stop()
        capture.stop()
        return Attempt(
            recorded: fromMonitor.drain(), periodsPlayed: playback.statistics.periods,
            xruns: playback.statistics.xruns + capture.statistics.xruns, messages: log.all.map(\.message),
            usedFallback: capture.isUsingFallback || playback.isUsingFallback)
    }

    @Test func anUnderrunIsRecoveredAndCounted() throws {
        try Self.withDaemon(for: "underrun") { daemon in
            // `handle_underrun` makes the plugin report an empty buffer as ALSA's underrun (EPIPE).
            let configuration = """
                pcm.room_speaker { type pulse; server "unix:\(daemon.socket)"; device "room"; handle_underrun true }
                """
            let speaker = try ALSAOutput(name: "room_speaker", options: ALSAOptions(configuration: configuration))
            #expect(!speaker.suitsRealTimePriority)
            let period = Signals.tone(frequency: 440, count: 480)
            func play(_ periods: Int) throws -> Int {
                var xruns = 0
                for _ in 0..<periods { xruns += try period.withUnsafeBufferPointer { try speaker.write($0) } }
                return xruns
            }
            _ = try play(20)
            // Nothing is written for 300 ms, far longer than the 40 ms buffer: the device runs dry, and the next
            // write recovers (with `snd_pcm_recover`) and counts it instead of failing.
            usleep(300_000)
            #expect(try play(20) >= 1)
        }
    }
}
