import AudioCore
import AudioDevices
import Foundation
import RoomTesting
import Synchronization
import Testing

@testable import ClientAudio

/// What a `RoomAudio` said, from its threads.
final class Heard: Sendable {
    private let reports = Mutex<[RoomAudioReport]>([])
    private let previews = Mutex<[MicrophonePreview]>([])

    func report(_ report: RoomAudioReport) { reports.withLock { $0.append(report) } }
    func preview(_ preview: MicrophonePreview) { previews.withLock { $0.append(preview) } }

    var allReports: [RoomAudioReport] { reports.withLock { $0 } }
    var allPreviews: [MicrophonePreview] { previews.withLock { $0 } }
}

/// The room's sound without a room: the loudspeaker and the microphone on paced virtual devices, as the screen
/// drives them before and around a session.
@Suite(.ownThread) struct RoomAudioTests {
    /// What the sound says of a WAV microphone at `path` that cannot be read.
    static func unreadable(_ path: String) -> String {
        "No microphone (“\(path)” unusable); using “null”. Choose one with --input NAME (see clubroom devices). "
            + "Details: \(path): cannot be read."
    }

    /// Runs `body` with a started sound whose microphone is the WAV file `name` in a fresh directory (absent
    /// until the test writes it), and that file's path; then stops the sound and removes the directory.
    func withWAVMicrophone(_ name: String, _ body: (RoomAudio, Heard, String) throws -> Void) rethrows {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file(name)
        let (sound, heard) = sound(input: .wav(path: path))
        sound.start()
        defer { sound.stop() }
        try body(sound, heard, path)
    }

    func sound(input: DeviceSpec) -> (RoomAudio, Heard) {
        let heard = Heard()
        let sound = RoomAudio(
            settings: RoomAudioSettings(input: input, output: .null, echoCancellation: false, volumesPath: nil),
            report: { heard.report($0) })
        return (sound, heard)
    }

    /// The consent prompt's preview: the microphone opens for it alone, and its live level comes back (a tone of
    /// 8000 peak is 15 dBov, shown as 75) while nothing is sent and the screen's own meter stays closed.
    @Test func aPreviewShowsTheMicrophonesLiveLevel() {
        let (sound, heard) = sound(input: .tone(hertz: 440))
        sound.start()
        defer { sound.stop() }
        #expect(sound.microphoneName == "tone:440")
        sound.startPreview { heard.preview($0) }
        #expect(waitUntil { heard.allPreviews.contains(.level(75)) })
        #expect(heard.allPreviews.allSatisfy { $0 == .level(75) })
        #expect(sound.microphoneOpenings == 1)
        #expect(heard.allReports.allSatisfy { $0 == .microphone(level: nil) || $0 == .microphoneMissing(false) })
        #expect(heard.allReports.contains(.microphoneMissing(false)))
    }

    /// Line mode asks for no level (it draws none): the preview still gets its level, and `.microphone` is never
    /// reported; the screen's default reports it (nil while the microphone is not open for speaking).
    @Test func aSoundThatReportsNoLevelNeverReportsTheMicrophonesLevel() {
        for reportsLevel in [true, false] {
            let heard = Heard()
            var settings = RoomAudioSettings(
                input: .tone(hertz: 440), output: .null, echoCancellation: false, volumesPath: nil)
            settings.reportsLevel = reportsLevel
            let sound = RoomAudio(settings: settings, report: { heard.report($0) })
            sound.start()
            sound.startPreview { heard.preview($0) }
            #expect(waitUntil { heard.allPreviews.contains(.level(75)) })
            // Three turns of the control thread (100 ms each) after the preview's level came back.
            usleep(300_000)
            sound.stop()
            let levels = heard.allReports.filter {
                if case .microphone = $0 { return true }
                return false
            }
            #expect(levels == (reportsLevel ? [.microphone(level: nil)] : []))
        }
    }

    /// The control thread looks ten times a second only while a level it reads is shown; otherwise twice, enough
    /// to notice a device that went away.
    @Test func theControlThreadWakesOftenOnlyWhileALevelIsShown() {
        let often = RoomAudio.controlInterval
        let seldom = RoomAudio.listeningControlInterval
        #expect((often, seldom) == (100_000, 500_000))
        #expect(RoomAudio.controlInterval(mode: .speaking, reportsLevel: true, previewing: false) == often)
        #expect(RoomAudio.controlInterval(mode: .speaking, reportsLevel: false, previewing: false) == seldom)
        #expect(RoomAudio.controlInterval(mode: .previewing, reportsLevel: false, previewing: true) == often)
        #expect(RoomAudio.controlInterval(mode: .listening, reportsLevel: true, previewing: false) == seldom)
        #expect(RoomAudio.controlInterval(mode: .off, reportsLevel: true, previewing: false) == seldom)
    }

    /// A microphone that cannot open says exactly why, to the preview and on the status line.
    @Test func aPreviewOfAMicrophoneThatCannotOpenSaysWhy() {
        withWAVMicrophone("no-microphone.wav") { sound, heard, missing in
            sound.startPreview { heard.preview($0) }
            let why = Self.unreadable(missing)
            #expect(waitUntil { heard.allPreviews.first == .unavailable(why) })
            #expect(heard.allReports.contains(.status(why)))
        }
    }

    /// The same microphone failing again when the stage reopens it after the preview is not told twice; once a
    /// microphone has opened, a new failure is told again. Issue 27 (M9): a role change is no change of the
    /// device, so leaving the stage and coming back does not tell the same failure again.
    @Test func aMicrophoneFailureIsToldOnceUntilOneOpens() throws {
        try withWAVMicrophone("microphone.wav") { sound, heard, path in
            let why = Self.unreadable(path)
            func told() -> Int { heard.allReports.filter { $0 == .status(why) }.count }

            func missing() -> [Bool] {
                heard.allReports.compactMap { if case .microphoneMissing(let missing) = $0 { missing } else { nil } }
            }

            sound.startPreview { heard.preview($0) }
            sound.setCapturing(true)
            #expect(sound.microphoneOpenings == 2)
            #expect(told() == 1)
            #expect(heard.allPreviews.filter { $0 == .unavailable(why) }.count == 2)
            #expect(missing() == [true, true])

            // The microphone comes back: the preview opens it again, and nothing fails.
            let samples = [Int16](repeating: 1000, count: AudioFormat.sampleRate)
            try Data(WAVAudio(samples: samples).encoded()).write(to: URL(fileURLWithPath: path))
            sound.setCapturing(false)
            #expect(sound.microphoneOpenings == 3)
            #expect(told() == 1)
            #expect(missing() == [true, true, false])

            // It goes again: that is news.
            try FileManager.default.removeItem(atPath: path)
            sound.setCapturing(true)
            #expect(sound.microphoneOpenings == 4)
            #expect(told() == 2)
            #expect(missing() == [true, true, false, true])

            // Back in the audience the microphone closes; opening it for the stage again is the same failure.
            sound.stopPreview()
            sound.setCapturing(false)
            sound.setCapturing(true)
            #expect(sound.microphoneOpenings == 5)
            #expect(told() == 2)
        }
    }

    /// Accepting ends the preview a moment before the stage opens the microphone (the role comes from the
    /// server): the failure the preview told is not told again, nor by a later invitation's preview while the
    /// microphone is as it was (its prompt shows it; issue 27, M9).
    @Test func acceptingAfterAFailedPreviewTellsTheFailureOnce() {
        withWAVMicrophone("no-microphone.wav") { sound, heard, _ in
            func told() -> Int { heard.allReports.filter { if case .status = $0 { true } else { false } }.count }
            sound.startPreview { heard.preview($0) }
            #expect(told() == 1)
            sound.stopPreview()
            sound.setCapturing(true)
            #expect(sound.microphoneOpenings == 2)
            #expect(told() == 1)
            // A later invitation: its preview shows the failure in the prompt, and the status line does not repeat it.
            sound.setCapturing(false)
            sound.startPreview { heard.preview($0) }
            sound.stopPreview()
            #expect(sound.microphoneOpenings == 3)
            #expect(told() == 1)
            #expect(heard.allPreviews.filter { if case .unavailable = $0 { true } else { false } }.count == 2)
        }
    }

    /// Issue 27 (M9): a loudspeaker that cannot open was told again on every role change (each reopens it), three
    /// lines a change with the microphone's. It is told once until it opens.
    @Test func aSpeakerFailureIsToldOncePerChangeOfTheDevice() {
        let heard = Heard()
        let sound = RoomAudio(
            settings: RoomAudioSettings(
                input: .tone(hertz: 440), output: .alsa("clubroom-test-no-such-pcm"),
                echoCancellation: false, volumesPath: nil),
            report: { heard.report($0) })
        sound.start()
        defer { sound.stop() }
        func speakerNews() -> [String] {
            heard.allReports.compactMap {
                if case .status(let text) = $0, text.hasPrefix("No speaker") { text } else { nil }
            }
        }
        #expect(waitUntil { speakerNews().count == 1 }, "\(heard.allReports)")
        for capturing in [true, false, true, false] { sound.setCapturing(capturing) }
        #expect(sound.microphoneOpenings == 2)
        #expect(speakerNews().count == 1, "\(heard.allReports)")
    }

    /// Accepting after a preview moves the microphone to a speaker's devices (it reopens there once); ending the
    /// preview then leaves it open for speaking; it closes when neither needs it, and a new preview opens it again.
    @Test func thePreviewHandsTheMicrophoneOverToSpeaking() {
        let (sound, heard) = sound(input: .tone(hertz: 440))
        sound.start()
        defer { sound.stop() }
        sound.startPreview { heard.preview($0) }
        #expect(sound.microphoneOpenings == 1)
        sound.setCapturing(true)
        #expect(sound.microphoneOpenings == 2)
        sound.stopPreview()
        #expect(sound.microphoneOpenings == 2)
        sound.setCapturing(false)
        sound.startPreview { heard.preview($0) }
        #expect(sound.microphoneOpenings == 3)
        #expect(waitUntil { heard.allPreviews.contains(.level(75)) })
    }
}

/// How the devices run as the screen opens and closes the microphone.
@Suite(.ownThread) struct RoomAudioModeTests {
    func sound() -> RoomAudio {
        RoomAudio(
            settings: RoomAudioSettings(
                input: .tone(hertz: 440), output: .null, echoCancellation: false, volumesPath: nil),
            report: { _ in })
    }

    @Test func listeningSpeakingAndPreviewingRunTheDevicesTheirOwnWay() {
        let sound = sound()
        #expect(sound.mode == .off)
        sound.start()
        defer { sound.stop() }
        #expect(sound.mode == .listening)
        #expect(sound.microphoneOpenings == 0)
        sound.setCapturing(true)
        #expect(sound.mode == .speaking)
        // Unmuting, or saying again that the role may publish, touches no device.
        sound.setMuted(false)
        sound.setCapturing(true)
        #expect(sound.microphoneOpenings == 1)
        sound.setCapturing(false)
        #expect(sound.mode == .listening)
        sound.startPreview { _ in }
        #expect(sound.mode == .previewing)
        sound.stopPreview()
        #expect(sound.mode == .listening)
        #expect(sound.microphoneOpenings == 2)
        sound.stop()
        #expect(sound.mode == .off)
    }
}
