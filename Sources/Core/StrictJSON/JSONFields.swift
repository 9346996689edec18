/// A member of an object that a typed read did not find as it must be.
public struct JSONMemberProblem: Sendable, Equatable {
    /// The member's key, after the place of its object in the document (`peers[2].` for instance).
    public var key: String
    /// What it must be: "a string", "an integer", "true or false", "an object", "an array"...
    public var expected: String
    /// Whether the member was required (then it was absent, null or of another type); false: an optional member
    /// of another type.
    public var required: Bool = true
}

/// The members of one object, read strictly by type: a member missing where it is required, or of another type,
/// is the failure its reader makes of the problem (each format says it in its own words). A null member counts
/// as absent.
public struct JSONFields<Failure: Error>: Sendable {
    /// The object read.
    public let json: JSONObject
    /// Where the object stands in its document, put before every key a problem names ("" at the top).
    public let place: String
    private let failure: @Sendable (JSONMemberProblem) -> Failure

    /// The members of `object`, at `place` in its document, whose problems `failure` turns into errors.
    public init(
        _ object: JSONObject, place: String = "", failure: @escaping @Sendable (JSONMemberProblem) -> Failure
    ) {
        self.json = object
        self.place = place
        self.failure = failure
    }

    /// The failure for member `key` (after this object's place), which must be `expected`.
    public func fail(_ key: String, _ expected: String, required: Bool = true) -> Failure {
        failure(JSONMemberProblem(key: place + key, expected: expected, required: required))
    }

    /// The fields of `inner`, an object at `place` (within the same document), read the same way.
    public func nested(_ inner: JSONObject, place: String) -> JSONFields {
        JSONFields(inner, place: place, failure: failure)
    }

    /// The member `key`, or nil when it is absent or null.
    public func optional(_ key: String) -> JSONValue? {
        guard let value = json[key], value != .null else { return nil }
        return value
    }

    /// Member `key` as `cast` reads it; a failure when it is absent, null or of another type.
    private func required<Value>(
        _ key: String, _ expected: String, _ cast: (JSONValue) -> Value?
    ) throws(Failure) -> Value {
        guard let value = optional(key), let typed = cast(value) else { throw fail(key, expected) }
        return typed
    }

    /// Member `key` as `cast` reads it, or nil when it is absent or null; a failure when of another type.
    private func optional<Value>(
        _ key: String, _ expected: String, _ cast: (JSONValue) -> Value?
    ) throws(Failure) -> Value? {
        guard let value = optional(key) else { return nil }
        guard let typed = cast(value) else { throw fail(key, expected, required: false) }
        return typed
    }

    private static func string(_ value: JSONValue) -> String? {
        if case .string(let text) = value { text } else { nil }
    }

    private static func integer(_ value: JSONValue) -> Int64? {
        if case .integer(let number) = value { number } else { nil }
    }

    private static func bool(_ value: JSONValue) -> Bool? {
        if case .bool(let flag) = value { flag } else { nil }
    }

    /// The string member `key`.
    public func string(_ key: String) throws(Failure) -> String {
        try required(key, "a string", Self.string)
    }

    /// The string member `key`, or nil when absent or null.
    public func optionalString(_ key: String) throws(Failure) -> String? {
        try optional(key, "a string", Self.string)
    }

    /// The integer member `key`.
    public func integer(_ key: String) throws(Failure) -> Int64 {
        try required(key, "an integer", Self.integer)
    }

    /// The integer member `key`, or nil when absent or null.
    public func optionalInteger(_ key: String) throws(Failure) -> Int64? {
        try optional(key, "an integer", Self.integer)
    }

    /// The member `key`, true or false.
    public func bool(_ key: String) throws(Failure) -> Bool {
        try required(key, "true or false", Self.bool)
    }

    /// The member `key`, true or false, or nil when absent or null.
    public func optionalBool(_ key: String) throws(Failure) -> Bool? {
        try optional(key, "true or false", Self.bool)
    }
}
