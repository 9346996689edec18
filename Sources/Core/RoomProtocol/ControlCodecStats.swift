import RoomCore
import StrictJSON

/// The `stats` answer: each person's speaking time and turns (docs/protocol.md, "Speaking time").
extension ControlCodec {
    /// The most people one `stats` answer lists (those who spoke most); a room's talkers are far fewer.
    public static let maxStatsPeople = 500

    /// Seconds to a tenth, as the wire carries speaking time.
    static func statsSeconds(_ milliseconds: Int64) -> Double {
        Double((max(0, milliseconds) + 50) / 100) / 10
    }

    static func writeStats(_ people: [SpeakingStat], id: RequestID?, into object: inout JSONObject) {
        object["people"] = .array(
            people.map { person in
                .object(
                    JSONObject([
                        ("peer", .string(person.peer.rawValue)),
                        // A peer is named by its identity: the same string, kept under its own name for readers
                        // that keep the answer after the room.
                        ("identity", .string(person.peer.rawValue)),
                        ("name", .string(person.name)),
                        ("seconds", .double(statsSeconds(person.milliseconds))),
                        ("turns", .integer(Int64(person.turns))),
                        ("talking", .bool(person.talking)),
                    ]))
            })
        switch id {
        case .string(let value): object["id"] = .string(value)
        case .integer(let value): object["id"] = .integer(value)
        case nil: break
        }
    }

    static func readStats(_ fields: Fields) throws(ControlDecodeError) -> WireEvent {
        let entries = try fields.array("people")
        guard entries.count <= maxStatsPeople else {
            throw ControlDecodeError(.badRequest, "\"people\" lists more than \(maxStatsPeople) people")
        }
        let people = try entries.map { value throws(ControlDecodeError) -> SpeakingStat in
            let person = Fields(try objectValue(value, "people"), stringLimit: serverStringLimit)
            let seconds: Double
            switch try person.value("seconds") {
            case .integer(let whole): seconds = Double(whole)
            case .double(let real): seconds = real
            default: throw ControlDecodeError(.badRequest, "the field \"seconds\" must be a number")
            }
            // Up to a year of talk: more is not a room's.
            guard seconds >= 0, seconds <= 366 * 86_400 else {
                throw ControlDecodeError(.badRequest, "the field \"seconds\" must be between 0 and a year")
            }
            return SpeakingStat(
                peer: try person.peer("peer"),
                name: try person.string("name", maxCharacters: ControlLimits.maxNameCharacters),
                milliseconds: Int64((seconds * 1000).rounded()),
                turns: Int(try person.integer("turns", in: 0...Int64(Int32.max))), talking: try person.bool("talking"))
        }
        return .stats(people: people, id: try readRequestID(fields.object))
    }
}
