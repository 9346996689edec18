internal import CALSA

#if canImport(Glibc)
import Glibc
#endif

/// Which way audio flows through a PCM.
public enum PCMDirection: Sendable, Equatable {
    case input
    case output
    case both
}

/// An ALSA PCM as alsa-lib's name hints describe it.
public struct PCMDescription: Sendable, Equatable {
    /// The name to open it by, such as `default`, `null` or `hw:CARD=PCH,DEV=0`.
    public var name: String
    /// alsa-lib's description, one entry per line (the first is usually the card, the next the device).
    public var descriptionLines: [String]
    /// Capture, playback or both.
    public var direction: PCMDirection
}

/// A sound card alsa-lib knows.
public struct SoundCard: Sendable, Equatable {
    /// The card's number, as in `hw:0`.
    public var index: Int
    /// The card's name, such as `HDA Intel PCH`.
    public var name: String
}

/// Stops alsa-lib from printing its own errors to stderr; call once before any other ALSA call.
///
/// Errors reach the person once, through our messages, and never scribble over the room screen.
public func silenceALSAErrors() {
    _ = clubroom_snd_silence_errors()
}

/// The PCMs alsa-lib's configuration and cards offer, in alsa-lib's order.
public func listPCMs() throws(AudioDeviceError) -> [PCMDescription] {
    var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    let status = snd_device_name_hint(-1, "pcm", &hints)
    guard status >= 0, let hints else {
        throw .listingFailed(code: status)
    }
    defer { snd_device_name_free_hint(hints) }
    var result: [PCMDescription] = []
    var cursor = hints
    while let hint = cursor.pointee {
        cursor += 1
        guard let name = hintField(hint, "NAME") else { continue }
        let description = hintField(hint, "DESC") ?? ""
        let direction: PCMDirection
        switch hintField(hint, "IOID") {
        case "Input": direction = .input
        case "Output": direction = .output
        default: direction = .both
        }
        let lines = description.split(separator: "\n").map(String.init)
        result.append(PCMDescription(name: name, descriptionLines: lines, direction: direction))
    }
    return result
}

/// The sound cards present, in card order; empty on a machine without sound hardware.
public func listSoundCards() -> [SoundCard] {
    var cards: [SoundCard] = []
    var index: Int32 = -1
    while snd_card_next(&index) >= 0, index >= 0 {
        var namePointer: UnsafeMutablePointer<CChar>?
        var name = "card \(index)"
        if snd_card_get_name(index, &namePointer) >= 0, let namePointer {
            name = String(cString: namePointer)
            free(namePointer)
        }
        cards.append(SoundCard(index: Int(index), name: name))
    }
    return cards
}

/// One field of a name hint; alsa-lib returns a copy the caller frees.
private func hintField(_ hint: UnsafeMutableRawPointer, _ field: String) -> String? {
    guard let value = snd_device_name_get_hint(hint, field) else { return nil }
    defer { free(value) }
    return String(cString: value)
}
