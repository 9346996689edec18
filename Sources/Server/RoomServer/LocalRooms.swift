import RoomCore
import RoomProtocol
import RoomTransport

/// Something that carries out part of what a room decided. Consumers read only the outcome (never the room),
/// so the same outcome can be applied wherever it arrives.
package protocol OutcomeConsumer: AnyObject {
    func consume(_ outcome: Outcome, in room: String)
}

/// A peer with a verified token asking to join a room, and how its connection hears the answer.
package struct JoinTicket {
    package var id: PeerID
    package var name: String
    package var role: RoleName
    package var now: Timestamp
    /// Whether only a returning member may come in: a server invite (a lobby link) for a room the lobby does not
    /// list right now, which after a restart is every room until someone brings it back. Such a join is let in
    /// when the room is listed and open and this identity is in it or left it within the reconnect grace, and is
    /// refused (`unlisted`) otherwise, exactly as for a room that does not exist.
    package var onlyIfReturning = false
    /// Whether the peer came with a server invite (a lobby link): its presence is recorded when it joins, even in
    /// the role its link gives, so that after a restart the room knows it as a returning member.
    package var fromLobby = false
    /// Who asked for the recording, as a recorder says (`X-Clubroom-Started-By`); nil from anyone else.
    package var startedBy: PeerID? = nil
    /// The stream a recorder carries, as it says (`X-Clubroom-Stream`); nil from anyone else.
    package var stream: String? = nil
    /// Whether the join is still wanted (its connection is still open), asked right before the room decides.
    package var isWanted: () -> Bool
    /// The room's answers, in order: `refused` or `unavailable` alone, or `accepted` at once and `admitted`
    /// once the join is committed and everything the room decided before it is announced.
    package var answer: (JoinAnswer) -> Void
}

/// What a room says to a join.
package enum JoinAnswer {
    /// The room refuses the join; the connection is closed with this reason.
    case refused(CloseReason)
    /// The room could not be loaded from the store; the connection is closed and the client tries again.
    case unavailable
    /// A join that only a returning member could make (`JoinTicket.onlyIfReturning`) came from someone else.
    case unlisted
    /// The room took the peer in: from now on this connection speaks for the peer (an older connection of the
    /// same identity no longer does). Nothing has been announced yet.
    case accepted(replaced: Bool)
    /// The join is committed and everything before it announced: the joiner gets `snapshot` now, and `outcome`
    /// is announced to the others right after.
    case admitted(snapshot: ServerMessage, outcome: Outcome, replaced: Bool)
}

/// The rooms this server owns, and the one path every change of a room takes: check → act → commit → publish.
///
/// Each room's `RoomAuthority` is the only place that checks a request and then acts on it, numbering the
/// events it emits (`seq`). Its `Outcome` is then committed (`OutcomeCommitter`: its changes made durable), and
/// only then published: the media gates first, then the messages and closes (`publish`). A room's outcomes are
/// published in the order it decided them, each once its commit is done, so a slow commit delays that room's
/// announcements but never the loop, and nothing is told to anyone before it is durable.
///
/// Departures are gathered for 50 ms (or until anything else is decided in the room) and decided together, so
/// a crowd leaving at once costs one announcement per member, not one per departure.
///
/// This is the seam for rooms shared across machines: a room owned by another node would take the same
/// requests, but instead of deciding here, the request would be appended to the owner's request stream, and
/// `publish` would run when the owner's committed outcome comes back from its event stream. The owner decides
/// here and commits by appending to the stream (its `OutcomeCommitter`).
///
/// Loop thread only, which makes the unchecked sendability safe: its timers run on the same loop.
final class LocalRooms: @unchecked Sendable {
    /// How long departures are gathered before they are decided together.
    static let departureWindow: Duration = .milliseconds(50)

    let roles: RoleTable
    let maxPeers: Int
    /// How long a room left without host or moderator goes on before it ends (`serve --hostless-grace`).
    let endingGrace: Timestamp
    let committer: OutcomeCommitter
    let loader: RoomLoader
    let log: ServerLog
    /// What carries out a committed outcome, in order: the media gates when the server serves audio, then the
    /// broadcast of messages and closes.
    private(set) var consumers: [OutcomeConsumer]
    /// The loop whose timers gather departures, once known; without one, departures are decided at once.
    var loop: EventLoop?
    private(set) var rooms: [String: RoomAuthority] = [:]
    /// Each room's live time as last given to the store (`OutcomeCommitter.save`).
    private var savedLiveSince: [String: Timestamp] = [:]
    /// The names of the server's stream destinations, which every room may stream to.
    var streamDestinations: [String] = []
    /// Joins waiting for their room to be loaded, in order.
    private var loading: [String: [JoinTicket]] = [:]

    /// Whether the room is held here now, or being loaded for someone who joins it.
    func isKnown(_ room: String) -> Bool { rooms[room] != nil || loading[room] != nil }
    private var carryOuts = CarryOutQueue()
    private var departures: [String: [Departure]] = [:]
    private var departureTimers: Set<String> = []
    /// Gives back the memory a crowd's departure freed.
    let memoryReturn = MemoryReturn()
    /// Why the server cannot save now (its disk is full), while it cannot: each room's hosts are told once.
    private(set) var savingProblem: String?
    /// The hosts told of `savingProblem`, by room.
    private var toldOfSaving: [String: Set<PeerID>] = [:]

    init(
        roles: RoleTable, maxPeers: Int, committer: OutcomeCommitter, loader: RoomLoader,
        consumers: [OutcomeConsumer], log: ServerLog, endingGrace: Timestamp = RoomAuthority.hostlessGrace
    ) {
        self.roles = roles
        self.maxPeers = maxPeers
        self.endingGrace = endingGrace
        self.committer = committer
        self.loader = loader
        self.consumers = consumers
        self.log = log
    }

    /// Makes `consumer` the first to carry out every outcome (the media gates: set before anyone hears of the
    /// change). Before the first connection.
    func consumeFirst(_ consumer: OutcomeConsumer) {
        consumers.insert(consumer, at: 0)
    }

    /// A peer asks to join: decided at once when the room is loaded, else once it is (joins waiting for the
    /// same room are decided in the order they came).
    func join(_ ticket: JoinTicket, room roomName: String) {
        if rooms[roomName] != nil {
            decideJoin(ticket, in: roomName)
            return
        }
        guard loading[roomName] == nil else {
            loading[roomName]?.append(ticket)
            return
        }
        loading[roomName] = [ticket]
        load(roomName, now: ticket.now, create: !ticket.onlyIfReturning)
    }

    /// Loads rooms nobody asked for yet (those with a deadline waiting, at start), so that the once-a-second tick
    /// acts on each when it is due whether or not anyone comes back. A room already loaded, or loading, is left.
    func resume(_ roomNames: [String], now: Timestamp) {
        for roomName in roomNames where rooms[roomName] == nil && loading[roomName] == nil {
            loading[roomName] = []
            load(roomName, now: now, create: false)
        }
    }

    /// Loads a room for the joins waiting for it. A room looked for only by joins that need it to exist already
    /// (`JoinTicket.onlyIfReturning`) is not made when the store never had it: those joins are refused, and the
    /// others that came meanwhile make it.
    private func load(_ roomName: String, now: Timestamp, create: Bool) {
        loader.load(roomName, now: now, create: create) { [self] result in
            var waiting = loading.removeValue(forKey: roomName) ?? []
            if case .success(let saved) = result, !saved.exists {
                for waiter in waiting where waiter.onlyIfReturning { waiter.answer(.unlisted) }
                waiting.removeAll { $0.onlyIfReturning }
                guard let first = waiting.first else { return }
                loading[roomName] = waiting
                load(roomName, now: first.now, create: true)
                return
            }
            switch result {
            case .success(let saved):
                // Sequence numbers start from the clock so they never go back after a restart (clients ignore
                // older ones).
                var room = RoomAuthority(
                    name: roomName, roles: roles, topic: saved.topic, ended: saved.ended, seq: now * 1000,
                    chat: saved.chat, departed: saved.departed, invitations: saved.invitations,
                    demotions: saved.demotions, maxPeers: maxPeers, listed: saved.listed, hands: saved.hands)
                room.handsAllowed = saved.handsAllowed
                room.endingGrace = endingGrace
                if let deadline = saved.deadline { room.restore(deadline, now: now) }
                // The room's age goes on from before the restart, while people come back to it.
                room.liveSince = saved.liveSince
                savedLiveSince[roomName] = saved.liveSince
                room.streamDestinations = streamDestinations
                rooms[roomName] = room
                log.info("room \(roomName) loaded\(saved.ended ? " (ended)" : "")")
                for waiter in waiting { decideJoin(waiter, in: roomName) }
            case .failure(let error):
                log.error("room \(roomName): could not load it from the database: \(error.problem)")
                for waiter in waiting { waiter.answer(.unavailable) }
            }
        }
    }

    private func decideJoin(_ ticket: JoinTicket, in roomName: String) {
        guard ticket.isWanted() else { return }
        // First the departures gathered so far: the one of this very identity, if its old connection just
        // dropped, must not undo the join.
        decideDepartures(in: roomName)
        guard var room = rooms[roomName] else { return }
        if ticket.onlyIfReturning, !Self.isReturning(ticket.id, to: room, now: ticket.now) {
            ticket.answer(.unlisted)
            return
        }
        let result = room.join(
            id: ticket.id, name: ticket.name, role: ticket.role, now: ticket.now, startedBy: ticket.startedBy,
            stream: ticket.stream)
        rooms[roomName] = room
        switch result {
        case .refused(let reason):
            ticket.answer(.refused(reason))
        case .joined(let snapshot, var outcome, let replaced):
            if ticket.fromLobby, let role = room.peers[ticket.id]?.role,
                !outcome.changes.contains(where: { if case .roleHeld(ticket.id, _, _) = $0 { true } else { false } })
            {
                outcome.changes.append(.roleHeld(ticket.id, role: role, at: ticket.now))
            }
            ticket.answer(.accepted(replaced: replaced))
            submit(outcome, in: roomName) { [self] _ in
                // A join's changes (a role given back) are the room's own; there is nobody to tell if they are not
                // saved, and the store has logged it.
                ticket.answer(.admitted(snapshot: snapshot, outcome: outcome, replaced: replaced))
                publish(outcome, in: roomName)
                tellHostsOfSaving(in: roomName)
            }
        }
    }

    /// Whether `id` comes back to `room`, listed and open, within the reconnect grace (or is in it now).
    static func isReturning(_ id: PeerID, to room: RoomAuthority, now: Timestamp) -> Bool {
        guard room.listed, !room.ended else { return false }
        if room.peers[id] != nil { return true }
        guard let left = room.departed[id] else { return false }
        return now - left.at <= RoomAuthority.reconnectGrace
    }

    /// A request from a peer of a room: checked and acted on by the room, then committed and published. Returns
    /// the refusal, if any, for the caller to send to the requester at once (a refusal changes nothing, so it
    /// waits for nothing).
    func handle(
        _ request: ClientRequest, from peer: PeerID, id: RequestID?, in roomName: String, now: Timestamp
    ) -> ServerMessage? {
        guard rooms[roomName] != nil else { return nil }
        decideDepartures(in: roomName)
        guard var room = rooms[roomName] else { return nil }
        let outcome = room.handle(request, from: peer, id: id, now: now)
        rooms[roomName] = room
        if let error = outcome.error { return error }
        submit(outcome, in: roomName) { [self] result in
            publish(outcome, in: roomName)
            if case .notSaved(let problem) = result {
                var notice = Outcome()
                notice.deliveries = [Delivery(to: .peer(peer), Self.notSaved(problem, id: id))]
                publish(notice, in: roomName)
            }
        }
        return nil
    }

    /// A peer's connection went away: gathered with the room's other departures of the next 50 ms.
    func leave(_ peer: PeerID, reason: LeaveReason, from roomName: String) {
        guard rooms[roomName] != nil else { return }
        departures[roomName, default: []].append(Departure(peer, reason))
        guard let loop else {
            decideDepartures(in: roomName)
            return
        }
        guard departureTimers.insert(roomName).inserted else { return }
        loop.schedule(after: Self.departureWindow) { [self] in
            departureTimers.remove(roomName)
            decideDepartures(in: roomName)
        }
    }

    /// Audio levels (0–100) measured by the media path; those that changed are announced.
    func updateLevels(_ levels: [PeerID: Int], in roomName: String) {
        guard var room = rooms[roomName] else { return }
        let outcome = room.updateLevels(levels, now: currentTimestamp())
        rooms[roomName] = room
        submit(outcome, in: roomName) { [self] _ in publish(outcome, in: roomName) }
    }

    /// The server gave up the recorder of `room`'s stream to `name`: the room stops streaming there, for `reason`.
    package func streamGaveUp(_ name: String, in roomName: String, reason: String) {
        guard var room = rooms[roomName] else { return }
        let outcome = room.streamGaveUp(name, reason: reason, now: currentTimestamp())
        rooms[roomName] = room
        guard !outcome.deliveries.isEmpty else { return }
        submit(outcome, in: roomName) { [self] _ in publish(outcome, in: roomName) }
    }

    /// The server's recorder of `room` could not start or was given up: its hosts and moderators are told.
    package func recorderProblem(_ sentence: String, in roomName: String) {
        guard let room = rooms[roomName] else { return }
        let outcome = room.recorderProblem(sentence)
        guard !outcome.deliveries.isEmpty else { return }
        publish(outcome, in: roomName)
    }

    /// Network quality measured by the media path; scores that changed are announced (see
    /// `RoomAuthority.updateQuality`).
    func updateQuality(_ measured: [PeerQuality], in roomName: String) {
        guard var room = rooms[roomName] else { return }
        let outcome = room.updateQuality(measured, now: currentTimestamp())
        rooms[roomName] = room
        guard !outcome.deliveries.isEmpty else { return }
        submit(outcome, in: roomName) { [self] _ in publish(outcome, in: roomName) }
    }

    /// Lets the invitations that waited their lifetime lapse, and announces reactions held back, in every room
    /// that has either due.
    func expireInvitations(now: Timestamp) {
        for (name, room) in rooms where (room.nextTimedWork ?? .max) <= now {
            var room = room
            let outcome = room.expireInvitations(now: now)
            rooms[name] = room
            submit(outcome, in: name) { [self] _ in publish(outcome, in: name) }
        }
    }

    /// Decides the room's gathered departures together, before anything else is decided in it, so the room
    /// sees departures in the order they happened.
    private func decideDepartures(in roomName: String) {
        guard let gathered = departures.removeValue(forKey: roomName), var room = rooms[roomName] else { return }
        let outcome = room.leave(gathered, now: currentTimestamp())
        rooms[roomName] = room
        memoryReturn.departed(gathered.count, loop: loop)
        submit(outcome, in: roomName) { [self] _ in publish(outcome, in: roomName) }
    }

    /// Commits an outcome and carries it out once it is committed and the room's earlier outcomes are carried
    /// out. An outcome with nothing to commit behind nothing waiting is carried out at once.
    private func submit(_ outcome: Outcome, in roomName: String, carryOut: @escaping (CommitResult) -> Void) {
        // The room's age is saved, but it is nobody's news: nothing waits for it to be durable.
        let live = rooms[roomName]?.liveSince
        if live != savedLiveSince[roomName] {
            savedLiveSince[roomName] = live
            committer.save([.live(since: live)], in: roomName)
        }
        guard !outcome.changes.isEmpty || carryOuts.isWaiting(roomName) else {
            carryOut(.committed)
            return
        }
        let step = carryOuts.append(roomName, carryOut)
        if outcome.changes.isEmpty {
            step.result = .committed
            return
        }
        committer.commit(outcome, in: roomName) { [self] result in
            step.result = result
            while let next = carryOuts.next(in: roomName), let result = next.result {
                next.carryOut(result)
            }
        }
    }

    /// Carries out a committed outcome: gates first, so a demoted or muted speaker is cut off before anyone hears
    /// of the change; then the messages and closes.
    func publish(_ outcome: Outcome, in room: String) {
        for consumer in consumers { consumer.consume(outcome, in: room) }
    }

    /// The store cannot save (`problem`, e.g. "the server's disk is full"), or (nil) saves again: the hosts of
    /// every room are told, once for the episode; a host who arrives during it is told on arrival.
    func savingChanged(_ problem: String?) {
        guard problem != savingProblem else { return }
        let wasFailing = savingProblem != nil
        savingProblem = problem
        if problem != nil {
            for name in rooms.keys.sorted() { tellHostsOfSaving(in: name) }
            return
        }
        guard wasFailing else { return }
        let told = toldOfSaving
        toldOfSaving = [:]
        for name in rooms.keys.sorted() {
            guard let room = rooms[name] else { continue }
            let hosts = room.order.filter { id in
                told[name]?.contains(id) == true || room.peers[id].map { roles.can($0.role, .endRoom) } == true
            }
            guard !hosts.isEmpty else { continue }
            var notice = Outcome()
            notice.deliveries = [Delivery(to: .peers(hosts), Self.savedAgain)]
            submit(notice, in: name) { [self] _ in publish(notice, in: name) }
        }
    }

    /// Tells the room's hosts not yet told that the server cannot save, while it cannot.
    private func tellHostsOfSaving(in roomName: String) {
        guard let problem = savingProblem, let room = rooms[roomName] else { return }
        let told = toldOfSaving[roomName, default: []]
        let hosts = room.order.filter { id in
            !told.contains(id) && room.peers[id].map { roles.can($0.role, .endRoom) } == true
        }
        guard !hosts.isEmpty else { return }
        toldOfSaving[roomName, default: []].formUnion(hosts)
        var notice = Outcome()
        notice.deliveries = [Delivery(to: .peers(hosts), Self.cannotSave(problem))]
        submit(notice, in: roomName) { [self] _ in publish(notice, in: roomName) }
    }

    /// What a room's hosts are told while the server cannot save.
    static func cannotSave(_ problem: String) -> ServerMessage {
        ServerMessage(
            .error(
                code: .notSaved,
                message: "The server cannot save right now: \(problem). The room goes on; what happens in it is "
                    + "saved once the server can, and lost if the server stops before then.",
                id: nil),
            seq: nil)
    }

    /// What a room's hosts are told once the server saves again.
    static let savedAgain = ServerMessage(
        .error(
            code: .saved,
            message: "The server saves again: what happened in the room while it could not is saved.", id: nil),
        seq: nil)

    /// The error telling a requester that what it asked for happened but is not saved.
    static func notSaved(_ problem: String, id: RequestID?) -> ServerMessage {
        ServerMessage(
            .error(
                code: .notSaved,
                message: "Done, but not saved: \(problem). It is lost if the server restarts before it can save again.",
                id: id),
            seq: nil)
    }
}
