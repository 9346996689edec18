/// A recorded room over time: what the room was like at any offset into its audio, from its record. Each answer
/// is worked out from the record alone, so a seek backwards or forwards gives the same room as playing up to the
/// same place.
public struct ReplayTimeline: Sendable, Equatable {
    /// The record this timeline reads.
    public let record: RecordingRecord
    /// The roles, for who is on the stage and in what order.
    public let roles: RoleTable

    /// The room at one moment.
    public struct Moment: Sendable, Equatable {
        /// The topic (empty for none).
        public var topic: String
        /// Who was in the room, with their roles, in the order they were first seen.
        public var people: [Present]
        /// Who was talking.
        public var talking: Set<PeerID> = []
        /// Chat messages and room events so far, oldest first.
        public var lines: [Line] = []
    }

    /// One person in the room at a moment.
    public struct Present: Sendable, Equatable {
        public var peer: PeerID
        public var name: String
        public var role: RoleName
    }

    /// A line of the chat and event pane.
    public enum Line: Sendable, Equatable {
        /// A chat message.
        case chat(name: String, text: String)
        /// A room event, in words.
        case event(String)
    }

    public init(record: RecordingRecord, roles: RoleTable) {
        self.record = record
        self.roles = roles
    }

    /// The length of the recording as the record knows it, in milliseconds.
    public var duration: Int64 { record.durationMilliseconds }

    /// The room at `offset` milliseconds: everything at or before it has happened.
    public func moment(at offset: Int64) -> Moment {
        var people: [Present] = []
        var names: [PeerID: String] = [:]
        var talking = Set<PeerID>()
        var lines: [Line] = []
        // The recorder writes the topic the room began with as a topic event at 0. A record without one (written
        // before that, or by hand) has only its last topic: with a change on the way, the topic before it is not
        // known; with none, the record's topic holds throughout.
        let changes = record.events.contains { if case .topic = $0.kind { return true } else { return false } }
        var topic = changes ? "" : record.topic
        // Whoever has a join event arrived during the recording; everyone else was there when it began.
        let arrivals = Set(
            record.events.compactMap { event -> PeerID? in
                if case .join(let peer, _, _) = event.kind { return peer }
                return nil
            })
        for person in record.people {
            names[person.peer] = person.name
            if !arrivals.contains(person.peer) {
                people.append(Present(peer: person.peer, name: person.name, role: person.role))
            }
        }
        func setRole(_ peer: PeerID, _ role: RoleName) {
            if let index = people.firstIndex(where: { $0.peer == peer }) {
                people[index].role = role
            } else {
                people.append(Present(peer: peer, name: names[peer] ?? peer.rawValue, role: role))
            }
        }
        for event in record.events where event.at <= offset {
            switch event.kind {
            case .stage(let peer, let role):
                setRole(peer, role)
            case .talk(let peer, let end):
                if offset < end { talking.insert(peer) }
            case .role:
                if let sentence = sentence(for: event, names: names) { lines.append(.event(sentence)) }
                if case .role(let peer, let role, _) = event.kind { setRole(peer, role) }
            case .topic(let text, _):
                if let sentence = sentence(for: event, names: names) { lines.append(.event(sentence)) }
                topic = text
            case .chat(_, let name, let text):
                lines.append(.chat(name: name, text: text))
            case .join(let peer, let name, let role):
                names[peer] = name
                people.removeAll { $0.peer == peer }
                people.append(Present(peer: peer, name: name, role: role))
                if let sentence = sentence(for: event, names: names) { lines.append(.event(sentence)) }
            case .leave(let peer):
                if let sentence = sentence(for: event, names: names) { lines.append(.event(sentence)) }
                people.removeAll { $0.peer == peer }
                talking.remove(peer)
            }
        }
        return Moment(topic: topic, people: people, talking: talking, lines: lines)
    }

    /// The events after `start` up to and including `end` (milliseconds), in time order: what a replay playing
    /// from `start` to `end` has to tell.
    public func events(after start: Int64, through end: Int64) -> [RecordingRecord.Event] {
        record.events.filter { $0.at > start && $0.at <= end }
    }

    /// The events at or before `end`: what has happened by then, for a replay starting there.
    public func events(through end: Int64) -> [RecordingRecord.Event] {
        record.events.filter { $0.at <= end }
    }

    /// The name the record gives `peer` (its id when the record does not name it).
    public func name(of peer: PeerID) -> String {
        record.people.first { $0.peer == peer }?.name
            ?? record.events.lazy.compactMap { event -> String? in
                switch event.kind {
                case .join(let id, let name, _) where id == peer: return name
                case .chat(let id, let name, _) where id == peer: return name
                default: return nil
                }
            }.first ?? peer.rawValue
    }

    /// What a listener is told of `event`, as a sentence; nil for an event told otherwise (the stage as it was
    /// when the recording began). Talk spurts say who started talking.
    public func sentence(for event: RecordingRecord.Event) -> String? {
        sentence(for: event, names: nil)
    }

    private func sentence(for event: RecordingRecord.Event, names: [PeerID: String]?) -> String? {
        func who(_ peer: PeerID) -> String { names?[peer] ?? name(of: peer) }
        switch event.kind {
        case .stage: return nil
        // The topic the room began with is told as the topic, not as a change.
        case .topic(_, nil) where event.at == 0: return nil
        case .talk(let peer, _): return "\(who(peer)) started talking."
        case .role(let peer, let role, let by):
            let label = roles.label(of: role)
            let actor = by.flatMap { $0 == peer || $0.rawValue.isEmpty ? nil : who($0) }
            if !roles.isOnStage(role) {
                return actor.map { "\($0) moved \(who(peer)) to the audience." } ?? "\(who(peer)) left the stage."
            }
            return actor.map { "\($0) made \(who(peer)) \(English.article(label))." }
                ?? "\(who(peer)) is now \(English.article(label))."
        case .topic(let text, let by):
            let actor = by.map(who) ?? "The room"
            return text.isEmpty ? "\(actor) cleared the topic." : "\(actor) set the topic: \"\(text)\"."
        case .chat(_, let name, let text): return "\(name) said: \(text)"
        case .join(_, let name, _): return "\(name) joined."
        case .leave(let peer): return "\(who(peer)) left."
        }
    }
}
