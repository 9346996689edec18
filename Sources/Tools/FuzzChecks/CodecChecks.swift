import RoomProtocol

/// `input` as `decode` reads it, or nil when it was refused as a decoder must refuse: with one of `codes` and a
/// message. `subject` names what was read in the failures ("an entry").
func decodedOrCleanlyRefused<Value>(
    _ input: [UInt8], codes: Set<ErrorCode>, subject: String = "a message",
    _ decode: ([UInt8]) throws(ControlDecodeError) -> Value
) throws(FuzzFailure) -> Value? {
    do {
        return try decode(input)
    } catch {
        try expect(codes.contains(error.code), "\(subject) refused with code \(error.code)")
        try expect(!error.message.isEmpty, "\(subject) refused without a message")
        return nil
    }
}

/// `value` encodes to bytes that decode to the same value and encode to the same bytes again. `subject` names
/// what was read in the failures ("a message").
func expectStableEncoding<Value: Equatable>(
    _ value: Value, subject: String = "a message", encode: (Value) -> [UInt8],
    decode: ([UInt8]) throws(ControlDecodeError) -> Value
) throws(FuzzFailure) {
    let encoded = encode(value)
    do {
        let again = try decode(encoded)
        try expect(again == value, "\(value) encodes to \(subject) read as \(again)")
        try expect(encode(again) == encoded, "encoding of \(value) is not stable")
    } catch {
        throw FuzzFailure("the encoding of \(value) is refused: \(error)")
    }
}
