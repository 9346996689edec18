internal import COpus

/// What went wrong inside a codec or signal-processing call, with the place it happened.
///
/// Every C return code is turned into one of these at once, so no C status escapes this target.
public enum AudioCodecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libopus refused a call; `detail` is libopus's own text for the code (`opus_strerror`).
    case opus(OpusStatus, place: String, detail: String)
    /// speexdsp could not create a state or refused a request.
    case speex(place: String, detail: String)
    /// A caller handed over a frame whose length the codec was not set up for.
    case wrongFrameSize(place: String, expected: Int, actual: Int)
    /// A caller asked for a setting outside what the codec supports.
    case invalidSetting(place: String, detail: String)

    public var description: String {
        switch self {
        case .opus(let status, let place, let detail):
            return "\(place): Opus error \(status.rawValue) (\(detail))"
        case .speex(let place, let detail):
            return "\(place): speexdsp error (\(detail))"
        case .wrongFrameSize(let place, let expected, let actual):
            return "\(place): expected a frame of \(expected) samples, got \(actual)"
        case .invalidSetting(let place, let detail):
            return "\(place): \(detail)"
        }
    }

    /// Builds the error for a negative libopus return code.
    static func opus(code: Int32, place: String) -> AudioCodecError {
        let detail = opus_strerror(code).map { String(cString: $0) } ?? "unknown error"
        return .opus(OpusStatus(code: code), place: place, detail: detail)
    }
}

/// The error codes libopus defines (`OPUS_BAD_ARG` …), as Swift values.
public enum OpusStatus: Int32, Sendable, Equatable {
    case badArgument = -1
    case bufferTooSmall = -2
    case internalError = -3
    case invalidPacket = -4
    case unimplemented = -5
    case invalidState = -6
    case allocationFailed = -7
    /// A code newer than this list; the error's detail still carries libopus's text.
    case unknown = -1000

    init(code: Int32) {
        self = OpusStatus(rawValue: code) ?? .unknown
    }
}
