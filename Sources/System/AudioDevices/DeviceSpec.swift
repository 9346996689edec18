/// Opens a microphone; a capture stream calls it again to reopen one that went away.
public typealias InputOpener = @Sendable () throws(AudioDeviceError) -> any AudioInput
/// Opens a loudspeaker; a playback stream calls it again to reopen one that went away.
public typealias OutputOpener = @Sendable () throws(AudioDeviceError) -> any AudioOutput

/// A microphone or loudspeaker as chosen on the command line (`--input`, `--output`): an ALSA PCM name, or one
/// of the virtual devices bots, tests and benchmarks use.
///
/// | spec | direction | device |
/// |---|---|---|
/// | `default`, `hw:1,0`, `pulse`, … | both | the ALSA PCM of that name |
/// | `alsa:NAME` | both | the ALSA PCM `NAME`, even when it looks like a virtual spec (`alsa:null`) |
/// | `tone:HZ` | input | a sine tone of HZ hertz (20–20000) |
/// | `wav:PATH` | input | a 16-bit PCM WAV file, looped |
/// | `silence` (or `null`) | input | nothing but silence |
/// | `null` | output | discards what is played |
/// | `record:PATH` | output | records what is played to a 48 kHz mono 16-bit WAV file |
public enum DeviceSpec: Sendable, Equatable, CustomStringConvertible {
    /// An ALSA PCM, by the name `arecord -D` and `aplay -D` take.
    case alsa(String)
    /// A microphone hearing a steady sine tone.
    case tone(hertz: Int)
    /// A microphone playing a WAV file over and over.
    case wav(path: String)
    /// A microphone hearing nothing.
    case silence
    /// A loudspeaker that discards everything.
    case null
    /// A loudspeaker that records into a WAV file.
    case record(path: String)

    /// The lowest and highest tone frequencies `tone:HZ` accepts.
    public static let toneRange = 20...20_000

    /// Parses an `--input` value.
    public static func input(_ text: String) throws(DeviceSpecError) -> DeviceSpec {
        try parse(text, direction: .capture)
    }

    /// Parses an `--output` value.
    public static func output(_ text: String) throws(DeviceSpecError) -> DeviceSpec {
        try parse(text, direction: .playback)
    }

    /// Whether this is one of Clubroom's own devices rather than an ALSA PCM.
    public var isVirtual: Bool {
        if case .alsa = self { return false }
        return true
    }

    /// The spec as it would be written on the command line.
    public var description: String {
        switch self {
        case .alsa(let name): return Self.virtualWords.contains(where: { name.hasPrefix($0) }) ? "alsa:\(name)" : name
        case .tone(let hertz): return "tone:\(hertz)"
        case .wav(let path): return "wav:\(path)"
        case .silence: return "silence"
        case .null: return "null"
        case .record(let path): return "record:\(path)"
        }
    }

    private static let virtualWords = ["tone:", "wav:", "record:", "silence", "null", "alsa:"]

    private static func parse(_ text: String, direction: DeviceDirection) throws(DeviceSpecError) -> DeviceSpec {
        func fail(_ problem: DeviceSpecError.Problem) -> DeviceSpecError {
            DeviceSpecError(spec: text, direction: direction, problem: problem)
        }
        guard !text.isEmpty else { throw fail(.empty) }
        let capture = direction == .capture
        if let name = text.dropPrefix("alsa:") {
            guard !name.isEmpty else { throw fail(.missingValue("alsa:NAME")) }
            return .alsa(name)
        }
        if let value = text.dropPrefix("tone:") {
            guard capture else { throw fail(.inputOnly("tone:HZ")) }
            guard let hertz = Int(value), toneRange.contains(hertz) else { throw fail(.badFrequency(value)) }
            return .tone(hertz: hertz)
        }
        if let path = text.dropPrefix("wav:") {
            guard capture else { throw fail(.inputOnly("wav:PATH")) }
            guard !path.isEmpty else { throw fail(.missingValue("wav:PATH")) }
            return .wav(path: path)
        }
        if let path = text.dropPrefix("record:") {
            guard !capture else { throw fail(.outputOnly("record:PATH")) }
            guard !path.isEmpty else { throw fail(.missingValue("record:PATH")) }
            return .record(path: path)
        }
        switch text {
        case "silence":
            guard capture else { throw fail(.inputOnly("silence")) }
            return .silence
        case "null":
            return capture ? .silence : .null
        default:
            return .alsa(text)
        }
    }

    /// Opens this spec as a microphone. ALSA devices open with `alsaOptions`; virtual ones keep `pacing`.
    public func openInput(
        pacing: Pacing = .realTime, alsaOptions: ALSAOptions = ALSAOptions()
    ) throws(AudioDeviceError) -> any AudioInput {
        switch self {
        case .alsa(let name): return try ALSAInput(name: name, options: alsaOptions)
        case .tone(let hertz): return ToneInput(frequency: Double(hertz), pacing: pacing)
        case .wav(let path): return try WAVFileInput(path: path, loops: true, pacing: pacing)
        case .silence, .null: return SilenceInput(name: description, pacing: pacing)
        case .record(let path): throw .file(path: path, problem: "record:PATH is an output, not a microphone")
        }
    }

    /// Why this output cannot be opened, found before anything joins so that a person hears it at once rather
    /// than a room without the recording: for `record:PATH`, a folder that does not exist, is not a folder or
    /// cannot be written in, a file that cannot be written over, or a path that is a folder; nil otherwise.
    public var outputProblem: String? {
        guard case .record(let path) = self else { return nil }
        return WAVFileOutput.problemWriting(path: path)
    }

    /// Opens this spec as a loudspeaker. ALSA devices open with `alsaOptions`; virtual ones keep `pacing`.
    public func openOutput(
        pacing: Pacing = .realTime, alsaOptions: ALSAOptions = ALSAOptions()
    ) throws(AudioDeviceError) -> any AudioOutput {
        switch self {
        case .alsa(let name): return try ALSAOutput(name: name, options: alsaOptions)
        case .null, .silence: return NullOutput(name: "null", pacing: pacing)
        case .record(let path): return try WAVFileOutput(path: path, pacing: pacing, continuing: true)
        case .tone, .wav: throw .file(path: description, problem: "\(description) is a microphone, not an output")
        }
    }
}

/// A device spec that does not parse, with the spec, which option it was for, and what is wrong.
public struct DeviceSpecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with a spec.
    public enum Problem: Sendable, Equatable {
        /// Nothing was given.
        case empty
        /// A `kind:` prefix with nothing after it; carries the expected form.
        case missingValue(String)
        /// A tone frequency that is not a whole number of hertz in range.
        case badFrequency(String)
        /// A microphone-only spec given as an output; carries the form.
        case inputOnly(String)
        /// An output-only spec given as a microphone; carries the form.
        case outputOnly(String)
    }

    /// The text as given.
    public let spec: String
    /// Whether it was given for the microphone or the loudspeaker.
    public let direction: DeviceDirection
    /// What is wrong.
    public let problem: Problem

    public var description: String {
        let option = direction == .capture ? "--input" : "--output"
        let prefix = "\(option) '\(spec)': "
        switch problem {
        case .empty:
            return prefix + "give an ALSA device name (see 'clubroom devices') or a virtual device"
        case .missingValue(let form):
            return prefix + "expected \(form)"
        case .badFrequency(let value):
            return prefix
                + "'\(value)' is not a tone frequency; use tone:HZ with a whole number of hertz from "
                + "\(DeviceSpec.toneRange.lowerBound) to \(DeviceSpec.toneRange.upperBound)"
        case .inputOnly(let form):
            let hint =
                form == "wav:PATH"
                ? "; to record what you hear use record:PATH" : "; outputs are an ALSA name, null or record:PATH"
            return prefix + "\(form) is a microphone, not an output\(hint)"
        case .outputOnly(let form):
            return prefix + "\(form) is an output, not a microphone; to play a file as the microphone use wav:PATH"
        }
    }
}

extension String {
    fileprivate func dropPrefix(_ prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
    }
}
