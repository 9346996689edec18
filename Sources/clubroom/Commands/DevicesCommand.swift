import Arguments
import AudioDevices

/// `clubroom devices`: the ALSA PCMs to choose from.
enum DevicesCommand: ClubroomCommand {
    static let declaration = Command(
        name: "devices", abstract: "List audio devices.",
        discussion: """
            Lists the ALSA PCMs this machine offers, with their descriptions. Choose one with --input and \
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
    lines.append("Choose devices with --input NAME and --output NAME, such as:")
    lines.append("    clubroom join URL --input default --output null")
    return lines.joined(separator: "\n") + "\n"
}
