import RoomCore
import RoomServer
import StrictJSON

/// A room's streams in its checkpoint: where it streams, since when, and which of its peers carry a stream.
/// An optional member of format version 1 (`streaming`), written only while there is something to keep, so a
/// checkpoint written before streaming reads as a room that streams nowhere.
struct StreamingCheckpoint: Sendable, Equatable {
    /// The destinations, in the order they were started.
    var to: [String]
    /// Since when the room streams; absent while `to` is empty.
    var since: Timestamp?
    /// The recorders in the room that carry a stream, with its destination.
    var peers: [PeerID: String]
}

extension RoomAuthority {
    var streamingCheckpoint: StreamingCheckpoint? {
        guard !streams.isEmpty || !streamPeers.isEmpty else { return nil }
        return StreamingCheckpoint(to: streams, since: streamingSince, peers: streamPeers)
    }

    mutating func restoreStreaming(_ checkpoint: StreamingCheckpoint?) {
        streams = checkpoint?.to ?? []
        streamingSince = streams.isEmpty ? nil : checkpoint?.since
        streamPeers = checkpoint?.peers ?? [:]
    }
}

extension ClusterFormat {
    static func json(_ streaming: StreamingCheckpoint) -> JSONValue {
        var object = JSONObject()
        object["to"] = .array(streaming.to.map { .string($0) })
        if let since = streaming.since { object["since"] = .integer(since) }
        object["peers"] = .object(
            JSONObject(streaming.peers.sorted { $0.key < $1.key }.map { ($0.key.rawValue, .string($0.value)) }))
        return .object(object)
    }

    static func streaming(_ fields: Reader) throws(ClusterFormatError) -> StreamingCheckpoint? {
        guard fields.optional("streaming") != nil else { return nil }
        let entry = try fields.object("streaming")
        let peers = try entry.object("peers")
        var carried: [PeerID: String] = [:]
        for key in peers.json.keys { carried[PeerID(key)] = try peers.string(key) }
        return StreamingCheckpoint(
            to: try entry.strings("to"), since: try entry.optionalInteger("since"), peers: carried)
    }
}
