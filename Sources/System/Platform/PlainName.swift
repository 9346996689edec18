/// The one rule for what a room or a cluster node may be called: 1 to 64 bytes of letters, digits, `-`, `_` and
/// `.`. Such a name needs no escaping in a URL path (`/rooms/NAME`), cannot break out of a Redis key's hash tag
/// (`cr:{NAME}:…`) or its `|`-separated values, and reads the same in every terminal.
public enum PlainName {
    /// The longest name, in bytes.
    public static let maximumBytes = 64

    /// Whether `name` follows the rule.
    public static func isValid(_ name: String) -> Bool {
        let bytes = name.utf8
        guard (1...maximumBytes).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                true
            default: false
            }
        }
    }
}
