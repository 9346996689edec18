import RoomProtocol

/// The codes a decoder of the control protocol (and the directory's) may refuse a message with.
let controlRefusalCodes: Set<ErrorCode> = [.badRequest, .invalidJSON, .duplicateKey, .unknownType, .unsupportedVersion]

/// Reads `input` with a decoder of the control protocol: the message, or nil when it was refused with one of
/// `controlRefusalCodes` and a sentence saying why. `subject` names what was read, for the failure's words.
func decodedOrRefused<Message>(
    _ input: [UInt8], _ subject: String, _ decode: ([UInt8]) throws(ControlDecodeError) -> Message
) throws(FuzzFailure) -> Message? {
    do {
        return try decode(input)
    } catch {
        try expect(controlRefusalCodes.contains(error.code), "\(subject) refused with code \(error.code)")
        try expect(!error.message.isEmpty, "\(subject) refused without a message")
        return nil
    }
}

/// Encodes `value` and decodes it again: it must read back as `value` and encode to the same bytes. An encoding
/// longer than `maxBytes`, which the decoder refuses by design, is not read back.
func expectStableRoundTrip<Value: Equatable>(
    _ value: Value, _ name: String, maxBytes: Int = .max, encode: (Value) -> [UInt8],
    decode: ([UInt8]) throws -> Value
) throws(FuzzFailure) {
    let encoded = encode(value)
    guard encoded.count <= maxBytes else { return }
    do {
        let again = try decode(encoded)
        try expect(again == value, "\(name) encodes to bytes read as \(again)")
        try expect(encode(again) == encoded, "encoding of \(name) is not stable")
    } catch {
        throw FuzzFailure("the encoding of \(name) is refused: \(error)")
    }
}
