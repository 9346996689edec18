import AudioCore
import RoomCore

/// Keeps the room's record as the recording goes: pure, fed with the room's events and the talk spurts heard, each
/// at its offset into the audio (milliseconds), and asked for the record at any moment.
///
/// The recorder itself is not a person of the record. A spurt still going on when the record is asked for ends at
/// that moment in it; a later record has it grow.
public struct RecordKeeper: Sendable {
    public let room: String
    public let startedMilliseconds: Int64
    public private(set) var topic: String
    private let selfID: PeerID
    private let roles: RoleTable
    private var people: [RecordingRecord.Person] = []
    private var seen: Set<PeerID> = []
    /// Who is in the room now, with their name and role.
    private var present: [PeerID: Peer] = [:]
    private var events: [RecordingRecord.Event] = []
    /// Talk spurts still going on: their start by peer.
    private var talking: [PeerID: Int64] = [:]
    /// Each person's speaking time and turns, by identity: AudioCore's tally, the one the live stats keep too.
    /// Spurts come already held (`TalkerActivity`'s pauses are part of them), so it holds no pause itself.
    private var tally = SpeakingTally<String>()
    private var lastOffset: Int64 = 0

    /// A record of `room` whose audio starts at `startedMilliseconds` (since the Unix epoch), beginning with the
    /// room as `peers` were then: everyone is a person of the record, those on the stage are on it at 0, and the
    /// topic (unless there is none) is a `topic` event at 0, so a replay knows it before the first change.
    public init(
        room: String, topic: String, startedMilliseconds: Int64, selfID: PeerID, roles: RoleTable, peers: [Peer]
    ) {
        self.room = room
        self.topic = topic
        self.startedMilliseconds = startedMilliseconds
        self.selfID = selfID
        self.roles = roles
        for peer in peers.sorted(by: { ($0.joinedAt, $0.id) < ($1.joinedAt, $1.id) }) where peer.id != selfID {
            meet(peer)
            present[peer.id] = peer
            if roles.isOnStage(peer.role) {
                events.append(.init(at: 0, .stage(peer.id, peer.role)))
            }
        }
        if !topic.isEmpty { events.append(.init(at: 0, .topic(topic, by: nil))) }
    }

    /// The name `id` goes by in the room, or went by when it was last seen.
    public func name(of id: PeerID) -> String? {
        present[id]?.name ?? people.last { $0.peer == id }?.name
    }

    /// A room event heard at `offset`.
    public mutating func apply(_ event: ServerEvent, at offset: Int64) {
        let offset = advance(offset)
        switch event {
        case .peerJoined(let peer, _):
            guard peer.id != selfID else { return }
            arrive(peer, at: offset)
        case .peerLeft(let peer), .removed(let peer, _, _):
            guard peer != selfID else { return }
            depart(peer, at: offset)
        case .roleChanged(let peer, let role, let by, _):
            guard peer != selfID, present[peer]?.role != role else { return }
            present[peer]?.role = role
            events.append(.init(at: offset, .role(peer, role, by: by)))
        case .topicChanged(let topic, let by):
            guard topic != self.topic else { return }
            self.topic = topic
            events.append(.init(at: offset, .topic(topic, by: by)))
        case .chat(let message):
            guard message.to == .everyone else { return }
            events.append(.init(at: offset, .chat(message.from, name: message.fromName, text: message.text)))
        default:
            break
        }
    }

    /// A fresh snapshot of the room (after a reconnect) at `offset`: whoever came or went, changed role, or the
    /// topic that changed while the connection was down, as events at that moment.
    public mutating func resync(peers: [Peer], topic: String, at offset: Int64) {
        let offset = advance(offset)
        let now = Dictionary(peers.filter { $0.id != selfID }.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for id in present.keys.sorted() where now[id] == nil { depart(id, at: offset) }
        for peer in peers.sorted(by: { ($0.joinedAt, $0.id) < ($1.joinedAt, $1.id) }) where peer.id != selfID {
            if let known = present[peer.id] {
                if known.role != peer.role {
                    events.append(.init(at: offset, .role(peer.id, peer.role, by: nil)))
                }
                present[peer.id] = peer
            } else {
                arrive(peer, at: offset)
            }
        }
        if topic != self.topic { apply(.topicChanged(topic, by: nil), at: offset) }
    }

    /// `peer` started talking at `offset` (a spurt already going on is kept).
    public mutating func talkStarted(_ peer: PeerID, at offset: Int64) {
        guard peer != selfID, talking[peer] == nil else { return }
        talking[peer] = max(0, offset)
        tally.start(peer.rawValue, at: max(0, offset))
    }

    /// `peer`'s spurt ended at `offset`.
    public mutating func talkEnded(_ peer: PeerID, at offset: Int64) {
        guard let start = talking.removeValue(forKey: peer) else { return }
        events.append(.init(at: start, .talk(peer, end: max(start, offset))))
        tally.stop(peer.rawValue, at: max(start, offset))
    }

    /// Who is talking now.
    public var talkers: Set<PeerID> { Set(talking.keys) }

    /// The record at `duration` milliseconds of audio; `complete` once the file is closed. Spurts going on end at
    /// `duration`; events are in time order (those at the same moment in the order they happened).
    public func record(duration: Int64, complete: Bool) -> RecordingRecord {
        var entries = events
        for (peer, start) in talking.sorted(by: { $0.key < $1.key }) {
            entries.append(.init(at: start, .talk(peer, end: max(start, duration))))
        }
        let ordered = entries.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }
            .map(\.element)
        return RecordingRecord(
            room: room, topic: topic, startedMilliseconds: startedMilliseconds, durationMilliseconds: duration,
            complete: complete, people: people, events: ordered, speakers: speakers(at: duration))
    }

    /// Each person's speaking time and turns at `duration` (a spurt going on counted up to it), most speaking time
    /// first.
    private func speakers(at duration: Int64) -> [RecordingRecord.Speaker] {
        let names = Dictionary(people.map { ($0.identity, $0.name) }, uniquingKeysWith: { a, _ in a })
        return tally.ranked(at: duration).map { identity, entry in
            RecordingRecord.Speaker(
                identity: identity, name: names[identity] ?? identity, seconds: entry.seconds, turns: entry.turns)
        }
    }

    private mutating func advance(_ offset: Int64) -> Int64 {
        lastOffset = max(lastOffset, offset)
        return lastOffset
    }

    private mutating func meet(_ peer: Peer) {
        guard seen.insert(peer.id).inserted else { return }
        people.append(
            .init(peer: peer.id, identity: peer.id.rawValue, name: peer.name, role: peer.role))
    }

    private mutating func arrive(_ peer: Peer, at offset: Int64) {
        meet(peer)
        present[peer.id] = peer
        events.append(.init(at: offset, .join(peer.id, name: peer.name, role: peer.role)))
    }

    private mutating func depart(_ peer: PeerID, at offset: Int64) {
        guard present.removeValue(forKey: peer) != nil else { return }
        talkEnded(peer, at: offset)
        events.append(.init(at: offset, .leave(peer)))
    }
}
