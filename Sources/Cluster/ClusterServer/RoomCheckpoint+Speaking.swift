import AudioCore
import RoomCore
import RoomServer
import StrictJSON

extension RoomCheckpoint {
    /// One person's speaking tally as it stands (`SpeakingTally.Record`), with their name.
    struct Speaking: Sendable, Equatable {
        var peer: PeerID
        var name: String
        /// Time of the turns that are over, and of the current one up to its last stop (ms).
        var closed: Int64
        var turns: Int
        var turnStart: Timestamp?
        var spurtStart: Timestamp?
        var lastStop: Timestamp?
    }
}

extension RoomAuthority {
    /// The speaking tally for a checkpoint, by identity; nil when no one has spoken.
    var speakingCheckpoint: [RoomCheckpoint.Speaking]? {
        let records = speaking.tally.records
        guard !records.isEmpty else { return nil }
        return records.sorted { $0.key < $1.key }.map { peer, record in
            RoomCheckpoint.Speaking(
                peer: peer, name: speaking.names[peer] ?? peer.rawValue, closed: record.closed, turns: record.turns,
                turnStart: record.turnStart, spurtStart: record.spurtStart, lastStop: record.lastStop)
        }
    }

    /// Takes the speaking tally of a checkpoint, so a copy counts on from where the room was.
    mutating func restoreSpeaking(_ entries: [RoomCheckpoint.Speaking]) {
        var records: [PeerID: SpeakingTally<PeerID>.Record] = [:]
        var names: [PeerID: String] = [:]
        for entry in entries {
            records[entry.peer] = SpeakingTally<PeerID>.Record(
                closed: entry.closed, turns: entry.turns, turnStart: entry.turnStart, spurtStart: entry.spurtStart,
                lastStop: entry.lastStop)
            names[entry.peer] = entry.name
        }
        speaking.tally = SpeakingTally(hold: RoomSpeaking.hold, records: records)
        speaking.names = names
    }
}

extension ClusterFormat {
    static func json(_ speaking: [RoomCheckpoint.Speaking]) -> JSONValue {
        .array(
            speaking.map { entry in
                var object = JSONObject()
                object["peer"] = .string(entry.peer.rawValue)
                object["name"] = .string(entry.name)
                object["closed"] = .integer(entry.closed)
                object["turns"] = .integer(Int64(entry.turns))
                if let at = entry.turnStart { object["turnStart"] = .integer(at) }
                if let at = entry.spurtStart { object["spurtStart"] = .integer(at) }
                if let at = entry.lastStop { object["lastStop"] = .integer(at) }
                return .object(object)
            })
    }

    /// The checkpoint's `speaking`, absent in one written before it was kept.
    static func speaking(_ fields: Reader) throws(ClusterFormatError) -> [RoomCheckpoint.Speaking]? {
        guard let entries = try fields.optionalObjects("speaking") else { return nil }
        var list: [RoomCheckpoint.Speaking] = []
        for entry in entries {
            let turns = try entry.unsigned("turns")
            guard turns <= UInt64(Int32.max) else { throw entry.fail("turns", "a number of turns") }
            list.append(
                RoomCheckpoint.Speaking(
                    peer: try entry.peer("peer"), name: try entry.string("name"), closed: try entry.integer("closed"),
                    turns: Int(turns), turnStart: try entry.optionalInteger("turnStart"),
                    spurtStart: try entry.optionalInteger("spurtStart"), lastStop: try entry.optionalInteger("lastStop")
                ))
        }
        return list
    }
}
