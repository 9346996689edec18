/// Checks UTF-8 a few bytes at a time, as they arrive, and says as soon as the bytes seen cannot begin valid
/// UTF-8 (RFC 6455 section 8.1, "fail fast"): a character cut between two frames, or two reads, is carried over.
///
/// It follows the well-formed byte sequences of Unicode's table 3-7, so overlong forms, surrogates and code
/// points past U+10FFFF are refused at their first byte that cannot be part of a valid sequence.
public struct UTF8Validator: Sendable, Equatable {
    /// Continuation bytes the character in progress still needs.
    private var needed = 0
    /// The range the next byte must be in while a character is in progress.
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    public init() {}

    /// Whether the bytes seen so far end between characters, so the text may end here.
    public var isAtCharacterBoundary: Bool { needed == 0 }

    /// Takes the next bytes; false once they cannot be part of valid UTF-8 (the validator is then undefined).
    public mutating func take(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var index = 0
        while index < bytes.count {
            if needed == 0 {
                // Between characters, plain ASCII (most of any JSON) is skipped eight bytes at a time.
                while index + 8 <= bytes.count {
                    let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                    guard word & 0x8080_8080_8080_8080 == 0 else { break }
                    index += 8
                }
                guard index < bytes.count else { break }
            }
            guard take(bytes[index]) else { return false }
            index += 1
        }
        return true
    }

    /// Takes one byte; false when it cannot continue valid UTF-8.
    @inline(__always)
    public mutating func take(_ byte: UInt8) -> Bool {
        if needed > 0 {
            guard byte >= lower && byte <= upper else { return false }
            needed -= 1
            lower = 0x80
            upper = 0xBF
            return true
        }
        switch byte {
        case 0x00...0x7F: return true
        case 0xC2...0xDF: needed = 1
        case 0xE0: (needed, lower) = (2, 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: needed = 2
        case 0xED: (needed, upper) = (2, 0x9F)
        case 0xF0: (needed, lower) = (3, 0x90)
        case 0xF1...0xF3: needed = 3
        case 0xF4: (needed, upper) = (3, 0x8F)
        default: return false
        }
        return true
    }
}
