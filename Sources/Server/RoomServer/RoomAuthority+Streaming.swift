import RoomCore
import RoomProtocol

// MARK: Streaming

/// Where the room streams live: the server's destinations (by the names its operator gave them) a host started
/// and nobody stopped. A destination is live from the moment `start_stream` is accepted until `stop_stream`, the
/// room's end or its recorder being given up (`streamGaveUp`): its recorder restarting after a crash keeps it live.
/// Everyone hears of each change (`streaming`); the recorders that carry the streams are in no list and no count.
extension RoomAuthority {
    /// Where the room streams now; nil when nowhere.
    public var streaming: StreamingState? {
        guard let since = streamingSince, !streams.isEmpty else { return nil }
        return StreamingState(to: streams, since: since)
    }

    /// The state checks of the streaming requests, after the role table allowed them.
    func streamConflict(_ request: ClientRequest, actor: Peer) -> (code: ErrorCode, message: String)? {
        switch request {
        case .startStream(let name):
            if !streamDestinations.contains(name) {
                return (.notFound, ClientRequest.noSuchStream(name, destinations: streamDestinations))
            }
            if streams.contains(name) { return (.conflict, ClientRequest.alreadyStreaming(to: name)) }
        case .stopStream(let name):
            if !streams.contains(name) { return (.conflict, ClientRequest.notStreaming(to: name)) }
        case .streamStatus:
            if streamPeers[actor.id] == nil {
                return (.forbidden, "only the recorder of one of the room's streams reports how it goes")
            }
        default:
            break
        }
        return nil
    }

    /// Carries out an accepted streaming request.
    mutating func actOnStream(_ request: ClientRequest, by actorID: PeerID, now: Timestamp, into outcome: inout Outcome)
    {
        switch request {
        case .startStream(let name):
            if streams.isEmpty { streamingSince = now }
            streams.append(name)
            broadcast(.streaming(streaming, by: actorID, reason: nil), into: &outcome)
            outcome.streamOrders.append(.start(name, by: actorID))
        case .stopStream(let name):
            stopStream(name, by: actorID, reason: nil, into: &outcome)
        case .streamStatus(let text):
            // A sentence per change of the stream's state, for those who may start and stop it, as a notice.
            let sentence = DisplayName.sanitizeLine(text, maxGraphemes: ClientRequest.maxStreamStatusLength)
            let hosts = order.filter { id in peers[id].map { roles.can($0.role, .stream) } ?? false }
            guard !sentence.isEmpty, !hosts.isEmpty else { return }
            outcome.deliveries.append(
                Delivery(to: .peers(hosts), ServerMessage(.error(code: .stream, message: sentence, id: nil), seq: nil)))
        default:
            break
        }
    }

    /// The room no longer streams to `name`: `by` stopped it, or it stopped on a fault (`reason`).
    mutating func stopStream(_ name: String, by: PeerID?, reason: String?, into outcome: inout Outcome) {
        guard streams.contains(name) else { return }
        streams.removeAll { $0 == name }
        if streams.isEmpty { streamingSince = nil }
        broadcast(.streaming(streaming, by: by, reason: reason), into: &outcome)
        outcome.streamOrders.append(.stop(name, by: by))
    }

    /// The server gave up the recorder of the stream to `name` (it kept failing at once): the room no longer
    /// streams there, and everyone is told why.
    public mutating func streamGaveUp(_ name: String, reason: String, now: Timestamp) -> Outcome {
        var outcome = Outcome()
        guard !ended else { return outcome }
        stopStream(name, by: nil, reason: reason, into: &outcome)
        reportListing(into: &outcome, now: now)
        return outcome
    }

    /// A host removed the recorder of the stream to `name`: it goes (none is kept out, so that the room may stream
    /// there again) and the room stops streaming there.
    mutating func removeStreamRecorder(_ id: PeerID, of name: String, by actor: PeerID, into outcome: inout Outcome) {
        broadcast(.removed(peer: id, by: actor, reason: Self.streamStopped), into: &outcome)
        peers[id] = nil
        order.removeAll { $0 == id }
        streamPeers[id] = nil
        outcome.closes.append((id, .removed))
        outcome.changes.append(.roleForgotten(id))
        stopStream(name, by: actor, reason: nil, into: &outcome)
    }

    /// The reason given to a stream's recorder removed because someone stopped its stream.
    public static let streamStopped = "the stream was stopped"

    /// The identity the server's recorder of the stream to `name` joins as (its token is the server's own): one
    /// per destination, so that each is a peer of its own beside the others and the room's recording.
    public static func streamIdentity(_ name: String) -> PeerID { PeerID("stream-" + name) }

    /// A recorder came in as the stream to `name`. Only the server's own recorder of a stream the room has is
    /// one: any other (a recorder run by hand with a link, naming a stream) is a recording, so that nothing in the
    /// room listens unseen.
    mutating func streamArrived(_ id: PeerID, name: String) -> Bool {
        guard streams.contains(name), id == Self.streamIdentity(name) else { return false }
        streamPeers[id] = name
        return true
    }
}
