import RoomCore
import StrictJSON

/// Typed access to an object's fields, each failure a `bad_request` naming the field. The types are read by
/// StrictJSON's one typed reader; what the protocol adds is the word for a missing field and its bounds.
struct Fields {
    let members: JSONFields<ControlDecodeError>
    /// The most UTF-8 bytes a string field may hold when its reader names no bound of its own.
    let stringLimit: Int

    init(_ object: JSONObject, stringLimit: Int = 4096) {
        // The reader's problems reach this only for a field of another type: the readers below find a missing one.
        self.members = JSONFields(object) { problem in
            ControlDecodeError(.badRequest, "the field \"\(problem.key)\" must be \(problem.expected)")
        }
        self.stringLimit = stringLimit
    }

    var object: JSONObject { members.json }

    /// A field's value; nil when it is absent or `null`, as an optional field may be.
    func optionalValue(_ key: String) -> JSONValue? {
        members.optional(key)
    }

    /// What an optional field's reader gave, for a field that must be there.
    func required<Value>(_ key: String, _ value: Value?) throws(ControlDecodeError) -> Value {
        guard let value else { throw ControlDecodeError(.badRequest, "the field \"\(key)\" is missing") }
        return value
    }

    func value(_ key: String) throws(ControlDecodeError) -> JSONValue {
        try required(key, optionalValue(key))
    }

    func string(_ key: String, maxBytes: Int? = nil, maxCharacters: Int? = nil) throws(ControlDecodeError) -> String {
        try required(key, optionalString(key, bytes: maxBytes ?? stringLimit, characters: maxCharacters))
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
        guard let text = try members.optionalString(key) else { return nil }
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
        try members.optionalBool(key)
    }

    func bool(_ key: String) throws(ControlDecodeError) -> Bool {
        try required(key, optionalBool(key))
    }

    func integer(_ key: String, in range: ClosedRange<Int64>? = nil) throws(ControlDecodeError) -> Int64 {
        let number = try required(key, optionalInteger(key))
        if let range, !range.contains(number) {
            throw ControlDecodeError(
                .badRequest, "the field \"\(key)\" must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return number
    }

    func optionalInteger(_ key: String) throws(ControlDecodeError) -> Int64? {
        try members.optionalInteger(key)
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
