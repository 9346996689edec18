import Foundation

/// Recordings made for tests, as `clubroom record` makes them: an Ogg Opus file of a tone (sox makes the tone,
/// opusenc encodes it) and, beside it, the room's record written by hand.
public enum RecordingFixture {
    /// Writes `seconds` of a `hertz` tone as Ogg Opus at `path` (48 kHz mono); throws when sox or opusenc fail.
    public static func toneOpus(at path: String, seconds: Double, hertz: Int = 440) throws {
        let wav = path + ".tone.wav"
        defer { unlink(wav) }
        let tone = spawnAndWait(
            "/usr/bin/sox",
            ["-n", "-r", "48000", "-c", "1", "-b", "16", wav, "synth", "\(seconds)", "sine", "\(hertz)", "vol", "0.3"])
        guard tone.status == 0 else { throw FixtureError("sox could not make the tone (\(tone.status))") }
        let encoded = spawnAndWait("/usr/bin/opusenc", ["--quiet", "--title", "tone", wav, path])
        guard encoded.status == 0 else { throw FixtureError("opusenc could not encode the tone (\(encoded.status))") }
    }

    /// Writes `text` as the record beside the recording at `opusPath` (`FILE.json` for `FILE.opus`).
    public static func writeRecord(_ text: String, besides opusPath: String) throws {
        let path = String(opusPath.dropLast(".opus".count)) + ".json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// A fixture that could not be made.
    public struct FixtureError: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}
