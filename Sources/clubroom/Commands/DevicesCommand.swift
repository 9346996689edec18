import Arguments
import AudioDevices
import Foundation

/// `clubroom devices`: the ALSA PCMs to choose from.
enum DevicesCommand: ClubroomCommand {
    static let declaration = Command(
        name: "devices", abstract: "List audio devices.",
        discussion: """
            Lists the ALSA PCMs this machine offers, with their descriptions, then the virtual devices that \
            need no sound card (a tone, a WAV file, silence, a recording). Choose one with --input and \
            --output when joining a room: clubroom join URL --input NAME --output NAME. The PCM named \
            'default' reaches PulseAudio or PipeWire where they run.
            """)

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        silenceALSAErrors()
        let pcms = try listPCMs()
        writeOutput(formatDeviceList(pcms: pcms, cards: listSoundCards()))
        return .success
    }
}

/// The listing: one block per PCM, then a plain word about sound cards and how to choose.
func formatDeviceList(pcms: [PCMDescription], cards: [SoundCard]) -> String {
    var lines: [String] = []
    for pcm in pcms {
        let direction: String
        switch pcm.direction {
        case .input: direction = "input"
        case .output: direction = "output"
        case .both: direction = "input and output"
        }
        lines.append("\(pcm.name)  (\(direction))")
        lines += pcm.descriptionLines.map { "    \($0)" }
        lines.append("")
    }
    if pcms.isEmpty { lines += ["No ALSA PCMs were found.", ""] }
    if cards.isEmpty {
        lines.append("No sound card was found: the PCMs above do not reach a speaker or a microphone.")
        lines.append("Rooms still work; you hear nothing and cannot speak unless you choose a device.")
    } else {
        let names = cards.map { "\($0.index): \($0.name)" }.joined(separator: ", ")
        lines.append("Sound cards: \(names).")
    }
    lines.append("")
    lines.append("Virtual devices (no sound card needed):")
    for (name, what) in virtualDevices {
        lines.append("  " + name.padding(toLength: 14, withPad: " ", startingAt: 0) + what)
    }
    lines.append("")
    lines.append("Choose devices with --input NAME and --output NAME, such as:")
    lines.append("    clubroom join URL --input default --output null")
    lines.append("    clubroom join URL --input wav:talk.wav --output record:room.wav")
    return lines.joined(separator: "\n") + "\n"
}

/// The devices `--input` and `--output` take besides ALSA's, as docs/audio-devices.md describes them.
let virtualDevices: [(name: String, what: String)] = [
    ("tone:HZ", "input: a steady sine tone of HZ hertz (20 to 20000), such as tone:440"),
    ("wav:PATH", "input: a 16-bit PCM WAV file, looped"),
    ("silence", "input: a microphone that hears nothing"),
    ("null", "output: plays to nowhere"),
    ("record:PATH", "output: records what the room plays to a 48 kHz mono WAV file"),
]
