/// Percent-encoding (RFC 3986 §2.1) as Clubroom reads it in request targets, invite headers and Redis URLs.
public enum PercentEncoding {
    /// `%XX` escapes decoded as UTF-8 (and `+` as a space when `plusIsSpace`, as HTML forms encode query items);
    /// nil for a broken escape or bytes that are not UTF-8.
    public static func decode(_ text: Substring, plusIsSpace: Bool = false) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else if plusIsSpace && byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `decode` of a whole string.
    public static func decode(_ text: String, plusIsSpace: Bool = false) -> String? {
        decode(Substring(text), plusIsSpace: plusIsSpace)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
