import Arguments
import AudioCodec
import AudioDevices
import ClientAudio
import ClubroomResources
import Foundation
import ProcessSignals
import RoomApp
import RoomAppRuntime
import RoomCore
import TermCurses

/// `clubroom replay`: a recording played with the room as it was.
enum ReplayCommand: ClubroomCommand {
    static let declaration = Command(
        name: "replay", abstract: "Play a room's recording, with the room as it was.",
        discussion: """
            Plays FILE.opus, a recording made by clubroom record, and shows the room screen as it was at each \
            moment, from the record beside it (FILE.json): the stage with whoever was talking highlighted, the \
            topic, and the chat as it arrived. space pauses and resumes, the left and right arrows go back and \
            on 10 seconds, Tab shows or hides the chat, q quits. With --plain, what happened is said as \
            sentences at their times while the audio plays. Without its record, the audio plays alone.
            """,
        positionals: [Positional("file", type: .string, required: true, help: "The recording (FILE.opus).")],
        options: [output.option, SharedOptions.ascii.option, plain.option])

    static let output = TypedOption.string(
        "output", placeholder: "DEVICE", default: "default", help: "Loudspeaker: an ALSA PCM, null or record:PATH.")
    static let plain = TypedOption.flag(
        "plain", help: "Line mode for screen readers and logs: what happened, as sentences at their times.")

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let path = arguments.string("file") ?? ""
        let plain = arguments[plain]
        var ascii = arguments[SharedOptions.ascii]
        if ascii, plain { throw ArgumentError.conflict("--ascii", "--plain") }
        let outputText = arguments[output]
        if let problem = outputProblem(option: "--output", outputText) { throw JoinFailure(text: problem) }
        let device: DeviceSpec
        do {
            device = try DeviceSpec.output(outputText)
        } catch {
            throw JoinFailure(text: error.description)
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw JoinFailure(text: "Cannot read \(path); check the path.")
        }
        let loudspeaker: any AudioOutput
        let player: ReplayPlayer
        do {
            // Checked before the loudspeaker opens, so a file that is not a recording leaves nothing behind.
            _ = try OggOpusFile(path: path)
            loudspeaker = try device.openOutput(pacing: .realTime)
            player = try ReplayPlayer(path: path, output: loudspeaker)
        } catch is SoundFileError {
            throw JoinFailure(text: "\(path) is not an Ogg Opus recording, so it cannot be replayed.")
        } catch {
            throw JoinFailure(text: "--output \(outputText): \(error)")
        }
        let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
        let opened = openRecord(besides: path, roles: roles)
        if let problem = opened.problem { writeError("clubroom replay: \(problem)\n") }
        let timeline = opened.timeline
        let length = player.lengthMilliseconds > 0 ? player.lengthMilliseconds : timeline?.duration ?? 0
        var notice = opened.problem
        if let record = timeline?.record, !record.complete {
            notice =
                "The recording was cut short (the recorder stopped without closing it); it ends at "
                + "\(ReplayText.clock(length))."
        }
        let title = timeline?.record.room ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        if !plain, !ascii, !Terminal.localeIsUTF8() { ascii = true }
        let state = ReplayState(timeline: timeline, title: title, length: length, notice: notice, ascii: ascii)
        ignoreBrokenPipes()
        let failure: String?
        if plain || ProcessInfo.processInfo.environment["TERM"] == "dumb" {
            failure = await ReplayFront.lines(state, player: player, output: { writeOutput($0 + "\n") })
        } else {
            failure = try await ReplayFront.screen(state, player: player)
        }
        if let failure { throw JoinFailure(text: "The replay stopped: \(failure).") }
        return .success
    }

    /// The record beside the recording at `path` (`FILE.json` for `FILE.opus`) as a timeline, or why there is
    /// none, in one sentence.
    static func openRecord(besides path: String, roles: RoleTable) -> (timeline: ReplayTimeline?, problem: String?) {
        let recordPath = RecordingRecord.path(forAudio: path)
        guard let data = FileManager.default.contents(atPath: recordPath) else {
            return (nil, "There is no record beside the recording (\(recordPath)), so the audio plays alone.")
        }
        do {
            return (ReplayTimeline(record: try RecordingRecord.parse([UInt8](data)), roles: roles), nil)
        } catch {
            return (nil, "The record \(recordPath) \(error), so the audio plays alone.")
        }
    }
}
