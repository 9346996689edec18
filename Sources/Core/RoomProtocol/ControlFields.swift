import RoomCore
import StrictJSON

/// Typed access to an object's fields, each failure a `bad_request` naming the field.
struct Fields {
    let object: JSONObject
    /// The most UTF-8 bytes a string field may hold when its reader names no bound of its own.
    let stringLimit: Int

    init(_ object: JSONObject, stringLimit: Int = 4096) {
        self.object = object
        self.stringLimit = stringLimit
    }

    func value(_ key: String) throws(ControlDecodeError) -> JSONValue {
        guard let value = object[key], value != .null else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" is missing")
        }
        return value
    }

    func string(_ key: String, maxBytes: Int? = nil, maxCharacters: Int? = nil) throws(ControlDecodeError) -> String {
        guard case .string(let text) = try value(key) else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be a string")
        }
        return try bounded(text, key, maxBytes: maxBytes ?? stringLimit, maxCharacters: maxCharacters)
    }

    func string(_ key: String, maxCharacters: Int) throws(ControlDecodeError) -> String {
        try string(key, maxBytes: maxCharacters * 4, maxCharacters: maxCharacters)
    }

    /// A peer's identity: 1 to 128 bytes.
    func peer(_ key: String) throws(ControlDecodeError) -> PeerID {
        let text = try string(key, maxBytes: ControlLimits.maxIdentityBytes)
        guard !text.isEmpty else { throw ControlDecodeError(.badRequest, "the field \"\(key)\" is empty") }
        return PeerID(text)
    }

    /// Why a peer left (`reason`).
    func leaveReason() throws(ControlDecodeError) -> LeaveReason {
        let text = try string("reason")
        guard let reason = LeaveReason(rawValue: text) else {
            throw ControlDecodeError(.badRequest, "unknown leave reason \"\(text)\"")
        }
        return reason
    }

    /// Who made a change (`by`): an identity, or empty when the server made it itself.
    func actor() throws(ControlDecodeError) -> PeerID {
        PeerID(try string("by", maxBytes: ControlLimits.maxIdentityBytes))
    }

    func optionalString(_ key: String, maxBytes: Int? = nil) throws(ControlDecodeError) -> String? {
        try optionalString(key, bytes: maxBytes ?? stringLimit, characters: nil)
    }

    func optionalString(_ key: String, maxCharacters: Int) throws(ControlDecodeError) -> String? {
        try optionalString(key, bytes: maxCharacters * 4, characters: maxCharacters)
    }

    private func optionalString(_ key: String, bytes: Int, characters: Int?) throws(ControlDecodeError) -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard case .string(let text) = value else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be a string")
        }
        return try bounded(text, key, maxBytes: bytes, maxCharacters: characters)
    }

    func bounded(
        _ text: String, _ key: String, maxBytes: Int, maxCharacters: Int?
    ) throws(ControlDecodeError)
        -> String
    {
        guard text.utf8.count <= maxBytes else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" is longer than \(maxBytes) bytes")
        }
        if let maxCharacters, text.count > maxCharacters {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" is longer than \(maxCharacters) characters")
        }
        return text
    }

    func optionalBool(_ key: String) throws(ControlDecodeError) -> Bool? {
        guard let value = object[key], value != .null else { return nil }
        guard case .bool(let flag) = value else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be true or false")
        }
        return flag
    }

    func bool(_ key: String) throws(ControlDecodeError) -> Bool {
        guard case .bool(let flag) = try value(key) else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be true or false")
        }
        return flag
    }

    func integer(_ key: String, in range: ClosedRange<Int64>? = nil) throws(ControlDecodeError) -> Int64 {
        guard case .integer(let number) = try value(key) else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be an integer")
        }
        if let range, !range.contains(number) {
            throw ControlDecodeError(
                .badRequest, "the field \"\(key)\" must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return number
    }

    func optionalInteger(_ key: String) throws(ControlDecodeError) -> Int64? {
        guard let value = object[key], value != .null else { return nil }
        guard case .integer(let number) = value else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be an integer")
        }
        return number
    }

    /// A number from 0 to 1 (an integer 0 or 1, or a fraction).
    func fraction(_ key: String) throws(ControlDecodeError) -> Double {
        let number: Double
        switch try value(key) {
        case .integer(let whole): number = Double(whole)
        case .double(let real): number = real
        default: throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be a number")
        }
        guard number >= 0, number <= 1 else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be between 0 and 1")
        }
        return number
    }

    func array(_ key: String) throws(ControlDecodeError) -> [JSONValue] {
        guard case .array(let elements) = try value(key) else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be an array")
        }
        return elements
    }
}
