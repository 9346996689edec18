import Dispatch
import Glibc
import RoomCore
import RoomProtocol
import RoomTesting
import RoomTransport
import Synchronization
import Testing

@testable import RoomServer

/// A commit step the test completes by hand, in any order.
final class ManualCommitter: OutcomeCommitter {
    var pending: [(outcome: Outcome, room: String, then: (CommitResult) -> Void)] = []

    func commit(_ outcome: Outcome, in room: String, then: @escaping (CommitResult) -> Void) {
        pending.append((outcome, room, then))
    }

    func complete(_ index: Int, _ result: CommitResult = .committed) {
        pending[index].then(result)
    }
}

/// A loader that answers at once with what it holds, or waits for the test when `manual`.
final class ManualLoader: RoomLoader {
    var saved: [String: SavedRoom] = [:]
    var manual = false
    var waiting: [(room: String, then: (Result<SavedRoom, RoomLoadError>) -> Void)] = []

    func load(
        _ room: String, now: Timestamp, create: Bool, then: @escaping (Result<SavedRoom, RoomLoadError>) -> Void
    ) {
        if manual {
            waiting.append((room, then))
        } else {
            var missing = SavedRoom()
            missing.exists = create
            then(.success(saved[room] ?? missing))
        }
    }
}

/// Every outcome published, in order.
final class PublishedOutcomes: OutcomeConsumer {
    var outcomes: [Outcome] = []

    func consume(_ outcome: Outcome, in room: String) {
        outcomes.append(outcome)
    }

    var events: [WireEvent] { outcomes.flatMap { $0.deliveries.map(\.message.event) } }
}

/// A join and what the room answered it.
final class JoinProbe {
    var answers: [String] = []
    var wanted = true
    var snapshot: ServerMessage?

    func ticket(_ id: PeerID, role: RoleName = .audience, now: Timestamp = 1) -> JoinTicket {
        JoinTicket(
            id: id, name: id.rawValue, role: role, now: now, isWanted: { [self] in wanted },
            answer: { [self] answer in
                switch answer {
                case .refused(let reason): answers.append("refused \(reason.rawValue)")
                case .unavailable: answers.append("unavailable")
                case .unlisted: answers.append("unlisted")
                case .accepted(let replaced): answers.append(replaced ? "accepted, replacing" : "accepted")
                case .admitted(let snapshot, _, _):
                    self.snapshot = snapshot
                    answers.append("admitted")
                }
            })
    }
}

struct RoomsUnderTest {
    let committer = ManualCommitter()
    let loader = ManualLoader()
    let published = PublishedOutcomes()
    let rooms: LocalRooms

    init() {
        rooms = LocalRooms(
            roles: defaultRoles, maxPeers: 100, committer: committer, loader: loader, consumers: [published],
            log: ServerLog(minimum: .error))
    }

    /// Joins `id` and returns its probe (admitted at once when nothing waits).
    @discardableResult
    func join(_ id: PeerID, role: RoleName = .audience) -> JoinProbe {
        let probe = JoinProbe()
        rooms.join(probe.ticket(id, role: role), room: "lobby")
        return probe
    }
}

@Suite(.ownThread) struct LocalRoomsTests {
    /// Issue 27 (H1): after a restart no room is listed until someone is back in it, and a lobby member's retry
    /// was refused as if the room did not exist. A join from a lobby link to a room the lobby does not show
    /// (`onlyIfReturning`) is let in when the room, listed and open, kept this identity's place; anyone else is
    /// refused as before, and a room the store never had is not made.
    @Test func aLobbyLinkLetsAReturningMemberBackIntoARoomNotListedYet() {
        let test = RoomsUnderTest()
        var stored = SavedRoom()
        stored.departed = ["bea": (.speaker, 1_000)]
        test.loader.saved["jazz"] = stored
        let bea = JoinProbe()
        var beaTicket = bea.ticket("bea", now: 5_000)
        beaTicket.onlyIfReturning = true
        let eve = JoinProbe()
        var eveTicket = eve.ticket("eve", now: 5_000)
        eveTicket.onlyIfReturning = true
        test.rooms.join(eveTicket, room: "jazz")
        test.rooms.join(beaTicket, room: "jazz")
        #expect(eve.answers == ["unlisted"])
        // Her role given back is saved before she is told.
        test.committer.complete(0)
        #expect(bea.answers == ["accepted", "admitted"])
        #expect(test.rooms.rooms["jazz"]?.peers["bea"]?.role == .speaker)
        // Back after the grace, or to a room its host unlisted, the place is gone: refused like a stranger.
        let late = JoinProbe()
        var lateTicket = late.ticket("bea", now: 1_000 + RoomAuthority.reconnectGrace + 1)
        lateTicket.onlyIfReturning = true
        var unlisted = SavedRoom()
        unlisted.listed = false
        unlisted.departed = ["bea": (.speaker, 1_000)]
        test.loader.saved["hidden"] = unlisted
        test.rooms.join(lateTicket, room: "hidden")
        #expect(late.answers == ["unlisted"])
        // A room the store never had: refused, and not made (nothing of it is kept).
        let nowhere = JoinProbe()
        var nowhereTicket = nowhere.ticket("eve", now: 5_000)
        nowhereTicket.onlyIfReturning = true
        test.rooms.join(nowhereTicket, room: "nowhere")
        #expect(nowhere.answers == ["unlisted"])
        #expect(test.rooms.rooms["nowhere"] == nil)
    }

    /// The server's once-a-second expiry ends a room whose last host left with no moderator present, once its
    /// grace is over: everyone is told and the room is ended in memory and in the store.
    @Test func theTickEndsARoomLeftWithoutHostOrModerator() {
        let test = RoomsUnderTest()
        test.join("ana", role: .host)
        test.join("eli")
        _ = test.rooms.handle(.leave, from: "ana", id: nil, in: "lobby", now: 10)
        let deadline = 10 + RoomAuthority.hostlessGrace
        #expect(test.rooms.rooms["lobby"]?.endsAt == deadline)
        test.rooms.expireInvitations(now: deadline - 1)
        #expect(test.rooms.rooms["lobby"]?.ended == false)
        test.rooms.expireInvitations(now: deadline)
        while let index = test.committer.pending.indices.first {
            let pending = test.committer.pending.remove(at: index)
            pending.then(.committed)
        }
        #expect(test.rooms.rooms["lobby"]?.ended == true)
        #expect(test.published.events.contains(.roomEnding(peer: "ana", name: "ana", at: deadline)))
        #expect(
            test.published.events.last
                == .roomEnded(by: "", reason: "the last host left and none came back"))
    }

    /// A room whose hands were turned off comes back from the store with them off, and turning them on is a
    /// change the store is given.
    @Test func aRoomLoadedWithHandsOffKeepsThemOff() {
        let test = RoomsUnderTest()
        var stored = SavedRoom()
        stored.handsAllowed = false
        test.loader.saved["lobby"] = stored
        test.join("ana", role: .host)
        #expect(test.rooms.rooms["lobby"]?.handsAllowed == false)
        _ = test.rooms.handle(.setHandsAllowed(true), from: "ana", id: nil, in: "lobby", now: 5)
        #expect(
            test.committer.pending.last?.outcome.changes == [
                .handsAllowed(true),
                .audit(
                    AuditEntry(at: 5, actor: "ana", action: "set_hands_allowed", detail: "on")),
            ])
    }

    @Test func outcomesArePublishedInTheOrderDecidedEachAfterItsCommit() {
        let test = RoomsUnderTest()
        test.join("ana", role: .host)
        test.join("eli")
        #expect(test.published.outcomes.count == 2)
        #expect(test.rooms.handle(.chat("one", to: .everyone), from: "ana", id: nil, in: "lobby", now: 2) == nil)
        #expect(test.rooms.handle(.chat("two", to: .everyone), from: "ana", id: nil, in: "lobby", now: 3) == nil)
        // Nothing to commit, but decided after the chats: it waits for them.
        // (A raised hand is kept in the store now; a mute is not.)
        #expect(test.rooms.handle(.setMute(false), from: "ana", id: nil, in: "lobby", now: 4) == nil)
        #expect(test.committer.pending.count == 2)
        test.committer.complete(1)
        #expect(test.published.outcomes.count == 2)
        test.committer.complete(0)
        let texts = test.published.events.compactMap { event -> String? in
            if case .chat(let message) = event { return message.text }
            return nil
        }
        #expect(texts == ["one", "two"])
        #expect(test.published.outcomes.count == 5)
        #expect(test.published.events.last == .muteChanged(peer: "ana", muted: false, by: "ana"))
        let seqs = test.published.outcomes.dropFirst().compactMap { $0.deliveries.first?.message.seq }
        #expect(seqs == seqs.sorted())
    }

    @Test func aRefusalIsAnsweredAtOnceAndWaitsForNothing() {
        let test = RoomsUnderTest()
        test.join("eli")
        _ = test.rooms.handle(.chat("pending", to: .everyone), from: "eli", id: nil, in: "lobby", now: 2)
        let refusal = test.rooms.handle(.setTopic("no"), from: "eli", id: .integer(3), in: "lobby", now: 3)
        guard case .error(let code, _, let id)? = refusal?.event else {
            Issue.record("not refused: \(String(describing: refusal))")
            return
        }
        #expect(code == .forbidden && id == .integer(3))
        #expect(test.committer.pending.count == 1)
    }

    @Test func whatIsNotSavedIsPublishedAndTheRequesterToldWhy() {
        let test = RoomsUnderTest()
        test.join("ana", role: .host)
        _ = test.rooms.handle(.setTopic("Friday"), from: "ana", id: .string("t1"), in: "lobby", now: 2)
        test.committer.complete(0, .notSaved(problem: "the server's disk is full"))
        #expect(test.rooms.rooms["lobby"]?.topic == "Friday")
        let last = test.published.outcomes.suffix(2)
        #expect(last.first?.deliveries.first?.message.event == .topicChanged(topic: "Friday", by: "ana"))
        #expect(
            last.last?.deliveries == [
                Delivery(
                    to: .peer("ana"),
                    ServerMessage(
                        .error(
                            code: .notSaved,
                            message:
                                "Done, but not saved: the server's disk is full. It is lost if the server restarts "
                                + "before it can save again.",
                            id: .string("t1")), seq: nil))
            ])
    }

    @Test func aJoinIsAcceptedAtOnceAndAdmittedAfterWhatCameBefore() {
        let test = RoomsUnderTest()
        test.join("ana", role: .host)
        _ = test.rooms.handle(.chat("before eli", to: .everyone), from: "ana", id: nil, in: "lobby", now: 2)
        let eli = test.join("eli")
        #expect(eli.answers == ["accepted"])
        #expect(test.rooms.rooms["lobby"]?.peers["eli"] != nil)
        test.committer.complete(0)
        #expect(eli.answers == ["accepted", "admitted"])
        // The joiner's snapshot holds the chat it would otherwise have heard of.
        guard case .joined(let state)? = eli.snapshot?.event else {
            Issue.record("no snapshot")
            return
        }
        #expect(state.chat.map(\.text) == ["before eli"])
        #expect(test.published.events.last == .peerJoined(AnnouncedPeer(test.rooms.rooms["lobby"]!.peers["eli"]!)))
    }

    @Test func joinsWaitForTheirRoomInOrderAndGetTheirSavedRoles() {
        let test = RoomsUnderTest()
        test.loader.manual = true
        let eli = test.join("eli")
        let fay = test.join("fay")
        #expect(test.loader.waiting.count == 1)
        #expect(eli.answers.isEmpty && fay.answers.isEmpty)
        var saved = SavedRoom()
        saved.topic = "kept"
        saved.departed = ["eli": (.speaker, 1)]
        test.loader.waiting[0].then(.success(saved))
        // eli's role given back is committed; fay, decided after, waits for it.
        #expect(eli.answers == ["accepted"] && fay.answers == ["accepted"])
        #expect(test.committer.pending.map(\.outcome.changes) == [[.roleHeld("eli", role: .speaker, at: 1)]])
        test.committer.complete(0)
        #expect(eli.answers == ["accepted", "admitted"] && fay.answers == ["accepted", "admitted"])
        #expect(test.rooms.rooms["lobby"]?.topic == "kept")
        #expect(test.rooms.rooms["lobby"]?.peers["eli"]?.role == .speaker)
        #expect(test.rooms.rooms["lobby"]?.peers.keys.sorted() == ["eli", "fay"])
    }

    @Test func aRoomThatCannotBeLoadedTurnsItsJoinsAway() {
        let test = RoomsUnderTest()
        test.loader.manual = true
        let eli = test.join("eli")
        test.loader.waiting[0].then(.failure(RoomLoadError(problem: "disk I/O error")))
        #expect(eli.answers == ["unavailable"])
        #expect(test.rooms.rooms["lobby"] == nil)
        // The next join tries again.
        test.join("fay")
        #expect(test.loader.waiting.count == 2)
    }

    @Test func aJoinWhoseConnectionWentAwayMeanwhileIsNotDecided() {
        let test = RoomsUnderTest()
        test.loader.manual = true
        let eli = test.join("eli")
        eli.wanted = false
        test.loader.waiting[0].then(.success(SavedRoom()))
        #expect(eli.answers.isEmpty)
        #expect(test.rooms.rooms["lobby"]?.peers.isEmpty == true)
    }

    @Test func departuresWithinTheWindowAreOneAnnouncement() throws {
        let loop = try EventLoop(name: "test-rooms")
        defer { loop.shutdown() }
        let test = RoomsUnderTest()
        let peersBefore = onLoop(loop) { () -> Int in
            test.rooms.loop = loop
            for index in 0..<5 { test.join(PeerID("p\(index)")) }
            for index in 0..<5 { test.rooms.leave(PeerID("p\(index)"), reason: .disconnected, from: "lobby") }
            return test.rooms.rooms["lobby"]?.peers.count ?? 0
        }
        #expect(peersBefore == 5)
        usleep(200_000)
        let (peersAfter, commits) = onLoop(loop) { () -> (Int, [[SavedChange]]) in
            let commits = test.committer.pending.map(\.outcome.changes)
            test.committer.pending.indices.forEach { test.committer.complete($0) }
            return (test.rooms.rooms["lobby"]?.peers.count ?? -1, commits)
        }
        #expect(peersAfter == 0)
        guard commits.count == 1, case .departed(_, _, let at)? = commits[0].first else {
            Issue.record("\(commits)")
            return
        }
        #expect(commits[0] == (0..<5).map { .departed(PeerID("p\($0)"), role: .audience, at: at) })
        let last = onLoop(loop) { test.published.events.last }
        #expect(last == .peersLeft((0..<5).map { Departure(PeerID("p\($0)"), .disconnected) }))
    }

    @Test func aReturnRightAfterADropIsAJoinAfterTheDeparture() throws {
        let loop = try EventLoop(name: "test-rooms")
        defer { loop.shutdown() }
        let test = RoomsUnderTest()
        let (answers, role, tail) = onLoop(loop) { () -> ([String], RoleName?, [WireEvent]) in
            test.rooms.loop = loop
            test.join("ana", role: .host)
            test.join("eli")
            _ = test.rooms.handle(.setRole("eli", .speaker), from: "ana", id: nil, in: "lobby", now: 2)
            test.committer.complete(0)
            // eli's connection drops, and eli is back within the departure window.
            test.rooms.leave("eli", reason: .disconnected, from: "lobby")
            let back = test.join("eli")
            test.committer.pending.indices.dropFirst().forEach { test.committer.complete($0) }
            return (
                back.answers, test.rooms.rooms["lobby"]?.peers["eli"]?.role,
                Array(test.published.events.suffix(2))
            )
        }
        #expect(answers == ["accepted", "admitted"])
        #expect(role == .speaker)
        guard tail.count == 2, case .peerLeft("eli", .disconnected) = tail[0], case .peerJoined(let joined) = tail[1]
        else {
            Issue.record("\(tail)")
            return
        }
        #expect(joined.peer.id == "eli" && joined.peer.role == .speaker)
    }
}

/// Runs `body` on `loop`'s thread, waits for it and returns what it returned (the checks are made on the
/// test's own thread, where a failure is recorded against the test).
func onLoop<Value>(_ loop: EventLoop, _ body: @escaping () -> Value) -> Value {
    let done = DispatchSemaphore(value: 0)
    let work = UncheckedBox<() -> Value>(body)
    let result = UncheckedBox<Value?>(nil)
    loop.execute {
        result.value = work.value()
        done.signal()
    }
    done.wait()
    return result.value!
}

/// A value a test hands to the loop's thread and back while it waits.
final class UncheckedBox<Value>: @unchecked Sendable {
    var value: Value

    init(_ value: Value) {
        self.value = value
    }
}

/// Rooms that had a deadline when the server stopped are loaded at start and acted on when due, whoever comes back.
@Suite(.ownThread) struct LocalRoomsDeadlineTests {
    @Test func aRoomWaitingForItsEndIsLoadedAtStartAndEndsWhenDue() {
        let test = RoomsUnderTest()
        var saved = SavedRoom()
        saved.deadline = RoomDeadline(handoverDue: nil, endsAt: 20_000, lastHost: "ana", lastHostName: "Ana")
        saved.departed = ["eli": (.audience, 9_000)]
        test.loader.saved["jazz"] = saved
        test.rooms.resume(["jazz"], now: 10_000)
        #expect(test.rooms.rooms["jazz"]?.endsAt == 20_000)
        // A newcomer meanwhile is told.
        let probe = JoinProbe()
        test.rooms.join(probe.ticket("eli", now: 11_000), room: "jazz")
        test.committer.pending.indices.forEach { test.committer.complete($0) }
        guard case .joined(let snapshot)? = probe.snapshot?.event else {
            Issue.record("no snapshot: \(probe.answers)")
            return
        }
        #expect(snapshot.ending == HostlessEnding(host: "ana", name: "Ana", at: 20_000))
        test.rooms.expireInvitations(now: 19_999)
        #expect(test.rooms.rooms["jazz"]?.ended == false)
        test.rooms.expireInvitations(now: 20_000)
        #expect(test.rooms.rooms["jazz"]?.ended == true)
        #expect(
            test.committer.pending.contains {
                $0.outcome.changes.contains(.ended(reason: "the last host left and none came back"))
            })
    }

    /// A room the store does not have is not made by a resume.
    @Test func aResumeMakesNoRoom() {
        let test = RoomsUnderTest()
        test.rooms.resume(["nowhere"], now: 10_000)
        #expect(test.rooms.rooms["nowhere"] == nil)
    }
}
