import Foundation
import RoomTesting
import Testing

/// One destination of a real `clubroom record` (a tone bot's room to its file, icecast2, nginx-rtmp and an HLS
/// folder nginx serves, all at once) killed with SIGKILL mid-stream and restarted on the same port: the other
/// streams go on through the outage, the recorder says once that the destination stopped and once that it is back,
/// the destination carries the room again within 10 s of its restart, and the file never notices.
@Suite(.ownThread, .serialized, .timeLimit(.minutes(4))) struct StreamFaultTests {
    enum Destination: CustomStringConvertible {
        case icecast, rtmp
        var description: String { self == .icecast ? "icecast" : "rtmp" }
    }

    @Test func anIcecastServerKilledAndRestartedIsStreamedToAgainWithoutTouchingTheOthers() throws {
        try killAndRestart(.icecast)
    }

    @Test func anRTMPServerKilledAndRestartedIsStreamedToAgainWithoutTouchingTheOthers() throws {
        try killAndRestart(.rtmp)
    }

    /// How long the killed destination stays down: long enough for several attempts to find nothing there.
    static let outageSeconds = 4.0

    private func killAndRestart(_ victim: Destination) throws {
        let rig = try StreamRig(name: "stream-fault-\(victim)")
        defer { rig.close() }
        let (room, ana, out, recorder) = (rig.room, rig.ana, rig.out, rig.recorder)
        #expect(rig.anaJoined)
        #expect(recorder.waitFor("Recording stage to", inErrors: true), "\(recorder.standardError)")
        let recording = Date()
        let names: [Destination: String] = [.icecast: rig.icecastName, .rtmp: rig.rtmpName]
        let allNames = [rig.icecastName, rig.rtmpName, rig.hlsName]
        for name in allNames {
            #expect(
                recorder.waitFor("Streaming to \(name) started.", inErrors: true, seconds: 20),
                "\(recorder.standardError)")
        }
        #expect(StreamRig.segmentsWritten(in: rig.hls))

        let urls: [Destination: String] = [.icecast: rig.icecastURL, .rtmp: rig.rtmpURL]
        let survivors = [victim == .icecast ? urls[.rtmp]! : urls[.icecast]!, rig.hlsURL]
        let (server, name, url) =
            victim == .icecast
            ? (rig.icecast, names[.icecast]!, urls[.icecast]!) : (rig.rtmp, names[.rtmp]!, urls[.rtmp]!)
        let before = readBack(url, seconds: 3) ?? []
        #expect(heardFrequency(before) == 440, "\(victim) before the outage: \(before.count) samples")

        let stopped = "Streaming to \(name) stopped: the connection was lost ("
        let down = Date()
        server.kill()
        #expect(recorder.waitFor(stopped, inErrors: true), "\(recorder.standardError)")
        for survivor in survivors {
            let heard = readBack(survivor, seconds: 3) ?? []
            #expect(heardFrequency(heard) == 440, "\(survivor) during the outage: \(heard.count) samples")
        }
        let rest = Self.outageSeconds - Date().timeIntervalSince(down)
        if rest > 0 { usleep(UInt32(rest * 1_000_000)) }

        try server.start()
        let back = "Streaming to \(name) is back."
        #expect(recorder.waitFor(back, inErrors: true, seconds: 10), "\(recorder.standardError)")
        let after = readBack(url, seconds: 3) ?? []
        #expect(heardFrequency(after) == 440, "\(victim) after its restart: \(after.count) samples")

        recorder.terminate(seconds: 20)
        let recorded = Date().timeIntervalSince(recording)
        ana.finish()
        _ = room.stop()
        let errors = recorder.standardError
        #expect(recorder.process.terminationStatus == 0, "\(errors)")
        #expect(errors.components(separatedBy: "Streaming to \(name) stopped:").count == 2, "\(errors)")
        #expect(errors.components(separatedBy: back).count == 2, "\(errors)")
        for other in allNames where other != name {
            #expect(!errors.contains("Streaming to \(other) stopped:"), "\(errors)")
        }
        for each in allNames { #expect(errors.contains("Streaming to \(each) ended."), "\(errors)") }

        // The file holds the whole run, the outage too, as one unbroken tone.
        let file = try RecordingEndToEndTests.decoded(out)
        let seconds = Double(file.count) / 48_000
        #expect(seconds >= recorded - 2, "the file holds \(seconds) s of \(recorded) s")
        let gap = Self.longestQuietRun(file)
        #expect(gap.frames <= 5, "\(gap.frames) quiet frames from \(gap.at) s of \(seconds) s")
        #expect(heardFrequency(file) == 440, "the file: \(file.count) samples")
    }

    /// The longest run of quiet 20 ms frames between the first and the last loud one, and where it starts (s).
    static func longestQuietRun(_ samples: [Int16]) -> (frames: Int, at: Double) {
        let frame = 960
        let loud = stride(from: 0, to: samples.count - frame + 1, by: frame).map {
            Signals.rms(samples[$0..<$0 + frame]) > 300
        }
        guard let first = loud.firstIndex(of: true), let last = loud.lastIndex(of: true) else {
            return (loud.count, 0)
        }
        var longest = (frames: 0, at: 0.0)
        var run = 0
        for index in first...last {
            run = loud[index] ? 0 : run + 1
            if run > longest.frames { longest = (run, Double(index - run + 1) * 0.02) }
        }
        return longest
    }
}
