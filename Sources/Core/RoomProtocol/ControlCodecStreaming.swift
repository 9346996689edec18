import RoomCore
import StrictJSON

/// Streaming on the wire: the `streaming` event, the snapshot's `streaming` and `stream_destinations`, and the
/// header a stream's recorder joins with (`docs/protocol.md`, "Streaming"). Only the names the server's operator
/// gave the destinations travel; their addresses never leave the server.
extension ControlCodec {
    /// The upgrade request's header that makes a recorder one stream's (the destination's name), not a recording.
    public static let streamHeader = "X-Clubroom-Stream"

    /// The destination a `X-Clubroom-Stream` header names; nil when there is none. Anything but a destination's
    /// name (1 to 32 of `a-z`, `0-9`, `-`) is refused.
    public static func decodeStreamHeader(_ text: String?) throws(ControlDecodeError) -> String? {
        guard let text else { return nil }
        guard StreamingState.isName(text) else {
            throw ControlDecodeError(.badRequest, "\"\(streamHeader)\" must be a stream's name: 1 to 32 of a-z 0-9 -")
        }
        return text
    }

    /// A request's `to`: a destination's name.
    static func readStreamName(_ fields: Fields) throws(ControlDecodeError) -> String {
        let name = try fields.string("to", maxBytes: StreamingState.maxNameLength)
        guard StreamingState.isName(name) else {
            throw ControlDecodeError(.badRequest, "\"to\" must be a stream's name: 1 to 32 of a-z 0-9 -")
        }
        return name
    }

    /// `to` (the destinations) and, while there is one, `since`.
    static func writeStreaming(_ streaming: StreamingState?, into object: inout JSONObject) {
        object["to"] = .array((streaming?.to ?? []).map { .string($0) })
        if let streaming { object["since"] = .integer(streaming.since) }
    }

    static func json(_ streaming: StreamingState) -> JSONValue {
        var object = JSONObject()
        writeStreaming(streaming, into: &object)
        return .object(object)
    }

    /// Destination names: each 1 to 32 of `a-z 0-9 -`, none twice, at most `StreamingState.maxDestinations`.
    static func readStreamNames(_ fields: Fields, _ key: String) throws(ControlDecodeError) -> [String] {
        let values = try fields.array(key)
        guard values.count <= StreamingState.maxDestinations else {
            throw ControlDecodeError(
                .badRequest, "\"\(key)\" names more than \(StreamingState.maxDestinations) streams")
        }
        var names: [String] = []
        for value in values {
            guard case .string(let name) = value, StreamingState.isName(name) else {
                throw ControlDecodeError(.badRequest, "\"\(key)\" holds something that is not a stream's name")
            }
            guard !names.contains(name) else {
                throw ControlDecodeError(.badRequest, "\"\(key)\" names \(name) twice")
            }
            names.append(name)
        }
        return names
    }

    /// Where the room streams, from `to` and `since` (`since` needed only when `to` names one); nil for none.
    static func readStreaming(_ fields: Fields) throws(ControlDecodeError) -> StreamingState? {
        let to = try readStreamNames(fields, "to")
        guard !to.isEmpty else { return nil }
        return StreamingState(to: to, since: try fields.integer("since"))
    }
}
