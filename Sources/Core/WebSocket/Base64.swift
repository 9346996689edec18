/// Standard base64 (RFC 4648) with padding, as the handshake uses it.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    /// Each byte's value in the alphabet, 0xFF for a byte outside it.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(index + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes padded base64; nil when the text is not canonical base64 (which includes unused bits before the
    /// padding that are not zero: otherwise several texts would decode to the same bytes).
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var index = 0
        while index < chars.count {
            var chunk: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let char = chars[index + offset]
                var value: UInt8 = 0
                if char == UInt8(ascii: "=") {
                    guard index + 4 == chars.count, offset >= 2 else { return nil }
                    padding += 1
                } else {
                    value = decodeTable[Int(char)]
                    guard padding == 0, value != 0xFF else { return nil }
                }
                chunk = chunk << 6 | UInt32(value)
            }
            // The bits the padding leaves unused must be zero, or several texts would spell the same bytes.
            if (padding == 2 && chunk & 0xFFFF != 0) || (padding == 1 && chunk & 0xFF != 0) { return nil }
            out.append(UInt8(chunk >> 16))
            if padding < 2 { out.append(UInt8(chunk >> 8 & 0xFF)) }
            if padding < 1 { out.append(UInt8(chunk & 0xFF)) }
            index += 4
        }
        return out
    }
}
