/// Base64url without padding (RFC 4648 §5), as JSON Web Tokens use it (RFC 7515 §2).
///
/// Decoding is strict: only the url-safe alphabet, no `=` padding, no whitespace, and the unused low bits of the
/// last character must be zero. Rejecting non-canonical spellings means one signature has exactly one spelling,
/// so a token cannot be altered without changing its bytes.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let decodeTable = decodeTable(for: alphabet)

    /// Each byte's value in `alphabet`, 0xFF for a byte outside it.
    static func decodeTable(for alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        return table
    }

    /// Encodes bytes as base64url text without padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
            output.append(alphabet[Int(chunk >> 6 & 0x3F)])
            output.append(alphabet[Int(chunk & 0x3F)])
            index += 3
        }
        switch input.count - index {
        case 1:
            let chunk = UInt32(input[index]) << 16
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
        case 2:
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
            output.append(alphabet[Int(chunk >> 6 & 0x3F)])
        default:
            break
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes base64url text without padding; `nil` when the text is not canonical base64url.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        decode(utf8: text.utf8)
    }

    /// Decodes base64url given as UTF-8 bytes; `nil` when they are not canonical base64url.
    public static func decode(utf8 input: some Collection<UInt8>) -> [UInt8]? {
        if input.count % 4 == 1 {
            return nil
        }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in input {
            let value = decodeTable[Int(character)]
            if value == 0xFF {
                return nil
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        if accumulator != 0 {
            return nil
        }
        return output
    }
}
