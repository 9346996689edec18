import Foundation
import RoomClient
import RoomCore
import RoomPersistence
import RoomProtocol
import RoomTesting
import RoomTokens
import RoomTransport
import Synchronization
import Testing
import WebSocket

@testable import Crypto

/// What a lobby's `DirectorySession` reports, and the list it adds up to.
final class DirectoryRecorder: Sendable {
    private let events = Mutex<[DirectoryEvent]>([])

    func record(_ event: DirectoryEvent) { events.withLock { $0.append(event) } }

    var all: [DirectoryEvent] { events.withLock { $0 } }

    /// The list as a lobby holds it after everything so far: the last whole list, then the changes after it.
    var rooms: [String: RoomListing] {
        var rooms: [String: RoomListing] = [:]
        for event in all {
            switch event {
            case .rooms(let list): rooms = Dictionary(uniqueKeysWithValues: list.map { ($0.room, $0) })
            case .changed(let changes):
                for change in changes {
                    switch change {
                    case .added(let listing, _), .updated(let listing): rooms[listing.room] = listing
                    case .removed(let room, _): rooms[room] = nil
                    }
                }
            default: break
            }
        }
        return rooms
    }

    /// Every change reported so far, in order.
    var changes: [ListingChange] {
        all.flatMap { event -> [ListingChange] in
            if case .changed(let changes) = event { return changes }
            return []
        }
    }

    /// Waits until `condition` holds for the list, or `timeout` passes.
    func waitFor(timeout: Double = 10, _ condition: ([String: RoomListing]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if all.contains(where: { if case .rooms = $0 { true } else { false } }), condition(rooms) { return true }
            usleep(10_000)
        }
        return false
    }

    func wait(timeout: Double = 10, _ match: (DirectoryEvent) -> Bool) -> DirectoryEvent? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = all.first(where: match) { return found }
            usleep(10_000)
        }
        return nil
    }
}

extension ServerProcess {
    var lobbyURL: String { "ws://127.0.0.1:\(port)/rooms" }

    /// An invite signed with this server's secret: to `room`, or to the lobby when nil.
    func invite(role: String = "audience", room: String? = nil, ttl: Int64 = 3600) throws -> String {
        try TokenIssuer(secret: try SecretFile.load(at: secretFile)).invite(
            role: role, room: room, ttl: ttl, now: Int64(Date().timeIntervalSince1970))
    }

    /// Watches the lobby with a server invite, as a client whose key is in `headers` (as `clubroom join` sends
    /// it), and waits for the first list.
    func watchLobby(
        token: String? = nil, headers: HTTPHeaders = guestHeaders(name: "Lobby")
    ) throws -> (DirectorySession, DirectoryRecorder) {
        let recorder = DirectoryRecorder()
        let session = try DirectorySession(url: lobbyURL, token: try token ?? invite(), headers: headers) {
            recorder.record($0)
        }
        session.start()
        guard recorder.wait(timeout: 10, { if case .rooms = $0 { true } else { false } }) != nil else {
            throw HarnessError(description: "the lobby got no list: \(recorder.all)")
        }
        return (session, recorder)
    }
}

/// A guest's key and name, as `clubroom join LINK` sends them.
func guestHeaders(name: String, key: [UInt8] = (0..<32).map { _ in UInt8.random(in: 0...255) }) -> HTTPHeaders {
    var headers = HTTPHeaders()
    headers.add(GuestHeaders.key, Base64URL.encode(key))
    headers.add(GuestHeaders.name, GuestHeaders.encodeName(name))
    return headers
}

/// Opens a session with `token` (and `headers`) to `room`; returns it with what it reported once it joined or
/// ended.
func session(
    _ server: ServerProcess, room: String, token: String, headers: HTTPHeaders = HTTPHeaders(), url: String? = nil,
    tls: TLSClientConfiguration = TLSClientConfiguration()
) throws -> (RoomSession, SessionRecorder) {
    let recorder = SessionRecorder()
    let session = try RoomSession(
        url: url ?? server.url(room: room), token: token, headers: headers, tls: tls,
        reconnect: ReconnectPolicy(maximumAttempts: 0)
    ) { recorder.record($0) }
    session.start()
    _ = recorder.wait {
        switch $0 {
        case .message(let message): if case .joined = message.event { return true } else { return false }
        case .ended: return true
        default: return false
        }
    }
    return (session, recorder)
}

/// The close code a session ended with, when it was refused.
func refusal(_ recorder: SessionRecorder) -> UInt16? {
    for event in recorder.all {
        if case .ended(.refused(let code, _)) = event { return code }
    }
    return nil
}

/// The snapshot a session joined with.
func snapshot(_ recorder: SessionRecorder) -> JoinedSnapshot? {
    for event in recorder.all {
        if case .message(let message) = event, case .joined(let snapshot) = message.event { return snapshot }
    }
    return nil
}

@Suite(.ownThread, .serialized) struct DirectoryTests {
    /// The lobby's list follows a room from its start to its end: who is on stage, how many listen, hands,
    /// the topic; and a room whose last person leaves leaves the list too.
    @Test(.timeLimit(.minutes(2))) func theLobbySeesRoomsStartChangeAndEnd() throws {
        try withServer { server, bots in
            let (lobby, seen) = try server.watchLobby()
            defer { lobby.stop() }
            #expect(seen.rooms.isEmpty)

            let ana = try server.bot(try server.token("ana", role: "host", room: "jazz", name: "Ana"), room: "jazz")
            bots.append(ana)
            try ana.expect("joined")
            #expect(seen.waitFor { $0["jazz"]?.onStage == 1 })
            #expect(seen.changes.first.map { if case .added(_, .started) = $0 { true } else { false } } == true)
            let started = try #require(seen.rooms["jazz"])
            #expect(started.stage == [RoomListing.StageMember(name: "Ana", role: .host)])
            #expect(started.listeners == 0 && started.raisedHands == 0 && started.topic == "")

            let eli = try server.bot(try server.token("eli", role: "audience", room: "jazz", name: "Eli"), room: "jazz")
            bots.append(eli)
            try eli.expect("joined")
            #expect(seen.waitFor { $0["jazz"]?.listeners == 1 })

            ana.send(#"{"cmd":"topic","text":"Late night jazz"}"#)
            #expect(seen.waitFor { $0["jazz"]?.topic == "Late night jazz" })
            eli.send(#"{"cmd":"raise_hand"}"#)
            #expect(seen.waitFor { $0["jazz"]?.raisedHands == 1 })
            ana.send(#"{"cmd":"set_role","peer":"eli","role":"speaker"}"#)
            #expect(
                seen.waitFor {
                    $0["jazz"].map { $0.onStage == 2 && $0.listeners == 0 && $0.raisedHands == 0 } ?? false
                })
            #expect(seen.rooms["jazz"]?.stage.map(\.name) == ["Ana", "Eli"])
            #expect(seen.rooms["jazz"].map { $0.startedAt == started.startedAt } == true)

            // A second room, emptied: it leaves the list as "empty".
            let bo = try server.bot(try server.token("bo", role: "host", room: "rust", name: "Bo"), room: "rust")
            bots.append(bo)
            try bo.expect("joined")
            #expect(seen.waitFor { $0["rust"] != nil })
            _ = try bo.finish()
            #expect(seen.waitFor { $0["rust"] == nil })
            #expect(seen.changes.contains(.removed(room: "rust", .empty)))

            ana.send(#"{"cmd":"end_room","reason":"goodnight"}"#)
            #expect(seen.waitFor { $0["jazz"] == nil })
            #expect(seen.changes.last == .removed(room: "jazz", .ended))
            // A fresh lobby gets the list as it stands: nothing.
            let (late, lateSeen) = try server.watchLobby()
            defer { late.stop() }
            #expect(lateSeen.rooms.isEmpty)
        }
    }

    /// An unlisted room never shows, a server invite cannot open it by name (the same refusal as a room that
    /// does not exist), its room links still work, and the host's choice survives a restart.
    @Test(.timeLimit(.minutes(2))) func anUnlistedRoomStaysOutOfTheLobbyAcrossARestart() throws {
        let server = try ServerProcess()
        var bots: [BotProcess] = []
        defer {
            for bot in bots { bot.kill() }
            server.stopAndClean()
        }
        let (lobby, seen) = try server.watchLobby()
        let hostToken = try server.token("ana", role: "host", room: "secret", name: "Ana")
        let ana = try server.bot(hostToken, room: "secret")
        bots.append(ana)
        try ana.expect("joined")
        #expect(seen.waitFor { $0["secret"] != nil })
        ana.send(#"{"cmd":"set_listed","listed":false}"#)
        try ana.expect("listing_changed") { $0.bool("listed") == false }
        #expect(seen.waitFor { $0["secret"] == nil })
        #expect(seen.changes.last == .removed(room: "secret", .unlisted))

        let (refused, refusedSeen) = try session(
            server, room: "secret", token: try server.invite(), headers: guestHeaders(name: "Eve"))
        defer { refused.shutdown() }
        #expect(refusal(refusedSeen) == 4014)
        let (unknown, unknownSeen) = try session(
            server, room: "nowhere", token: try server.invite(), headers: guestHeaders(name: "Eve"))
        defer { unknown.shutdown() }
        #expect(refusal(unknownSeen) == 4014)

        let (linked, linkedSeen) = try session(
            server, room: "secret", token: try server.invite(room: "secret"), headers: guestHeaders(name: "Hana"))
        defer { linked.shutdown() }
        #expect(snapshot(linkedSeen)?.listed == false)
        #expect(snapshot(linkedSeen)?.peers.contains { $0.peer.name == "Hana" } == true)
        // The log says which link let the guest in (its invite's ID), and the host came by a token, not a link. The
        // log reaches the test through a pipe, possibly after the snapshot: it is waited for.
        #expect(
            waitUntil(limit: 10, every: 0.05) {
                !server.logLines(containing: "joined room secret as audience by invite ").isEmpty
            })
        #expect(server.logLines(containing: "joined room secret as audience by invite ").count == 1)
        #expect(server.logLines(containing: "ana joined room secret as host").first?.contains(" by ") == false)
        usleep(300_000)
        #expect(seen.rooms.isEmpty, "an unlisted room's joins reached the lobby: \(seen.all)")
        lobby.stop()
        linked.leave()
        ana.kill()

        server.stop()
        let again = try ServerProcess(directory: server.directory)
        defer { again.stop() }
        let (afterRestart, afterSeen) = try again.watchLobby()
        defer { afterRestart.stop() }
        let back = try again.bot(hostToken, room: "secret")
        bots.append(back)
        try back.expect("joined")
        usleep(300_000)
        #expect(afterSeen.rooms.isEmpty)
        back.send(#"{"cmd":"set_listed","listed":true}"#)
        #expect(afterSeen.waitFor { $0["secret"] != nil })
        #expect(afterSeen.changes.last.map { if case .added(_, .listed) = $0 { true } else { false } } == true)
    }

    /// A room's age in the lobby goes on across a `kill -9` of the server: the room comes back from the database
    /// with the time it started, instead of starting again when its people return.
    @Test(.timeLimit(.minutes(2))) func aRoomKeepsItsStartTimeAcrossACrash() throws {
        let first = try ServerProcess()
        var bots: [BotProcess] = []
        defer {
            for bot in bots { bot.kill() }
            first.stopAndClean()
        }
        let (lobby, seen) = try first.watchLobby()
        let hostToken = try first.token("ana", role: "host", room: "jazz", name: "Ana")
        let ana = try first.bot(hostToken, room: "jazz")
        bots.append(ana)
        try ana.expect("joined")
        #expect(seen.waitFor { $0["jazz"] != nil })
        let startedAt = try #require(seen.rooms["jazz"]?.startedAt)
        // A change committed after the start: once it is announced, the start time is in the journal too.
        ana.send(#"{"cmd":"topic","text":"Late night jazz"}"#)
        try ana.expect("topic_changed")
        lobby.stop()
        first.crash()
        ana.kill()

        let again = try ServerProcess(directory: first.directory, port: first.port)
        defer { again.stop() }
        let (afterRestart, afterSeen) = try again.watchLobby()
        defer { afterRestart.stop() }
        let back = try again.bot(hostToken, room: "jazz")
        bots.append(back)
        try back.expect("joined")
        #expect(afterSeen.waitFor { $0["jazz"] != nil })
        #expect(afterSeen.rooms["jazz"]?.startedAt == startedAt)
    }

    /// The host's unlisting is committed like any other change: announced only once it is in the change
    /// journal, so it survives a `kill -9` right after, even while another program holds the database's write
    /// lock (so that it cannot have reached the database yet).
    @Test(.timeLimit(.minutes(2))) func anUnlistingSurvivesKillNineWhileTheDatabaseIsLocked() throws {
        let first = try ServerProcess()
        defer { first.stopAndClean() }
        let hostToken = try first.token("ana", role: "host", room: "secret", name: "Ana")
        do {
            let ana = try first.bot(hostToken, room: "secret")
            defer { ana.kill() }
            try ana.expect("joined")
            let lock = try DatabaseLockHolder(database: first.dataDirectory + "/" + RoomDatabase.fileName)
            defer { lock.release() }
            ana.send(#"{"cmd":"set_listed","listed":false}"#)
            try ana.expect("listing_changed") { $0.bool("listed") == false }
            first.crash()
        }
        let again = try ServerProcess(directory: first.directory)
        defer { again.stop() }
        #expect(again.logLines(containing: "saved changes the database did not have yet").count == 1)
        let (lobby, seen) = try again.watchLobby()
        defer { lobby.stop() }
        let (back, backSeen) = try session(again, room: "secret", token: hostToken)
        defer { back.shutdown() }
        #expect(snapshot(backSeen)?.listed == false)
        usleep(300_000)
        #expect(seen.rooms.isEmpty, "a room unlisted before the crash reached the lobby: \(seen.all)")
    }

    /// Every bad way in has its own close code, and costs only that connection.
    @Test(.timeLimit(.minutes(2))) func everyBadInviteIsRefusedWithItsOwnCloseCode() throws {
        try withServer { server, bots in
            let ana = try server.bot(try server.token("ana", role: "host", room: "jazz", name: "Ana"), room: "jazz")
            bots.append(ana)
            try ana.expect("joined")
            let now = Int64(Date().timeIntervalSince1970)
            let secret = try SecretFile.load(at: server.secretFile)
            let expired = try TokenIssuer(secret: secret).issueInvite(
                InviteClaims(role: "audience", room: nil, id: "old", expiresAt: now - 3600, notBefore: now - 7200))
            let otherServer = try TokenIssuer(secret: TokenSecret(bytes: Array(repeating: 9, count: 32))).invite(
                role: "audience", room: nil, ttl: 3600, now: now)
            // Signed with another secret but naming this server's key: a forgery, not another server's invite.
            let forged = try RoomToken.signInvite(
                InviteClaims(role: "audience", room: nil, id: "x", expiresAt: now + 3600, notBefore: now),
                keyID: ServerKeys(secret: secret).keyID
            ) { HMACSHA256.sign(key: Array(repeating: 9, count: 32), message: $0) }
            let guest = guestHeaders(name: "Eve")
            let cases: [(String, String, String, HTTPHeaders, UInt16)] = [
                ("malformed", "jazz", "not.a.token", guest, 4001),
                ("forged", "jazz", forged, guest, 4003),
                ("expired", "jazz", expired, guest, 4004),
                ("room invite for another room", "jazz", try server.invite(room: "rust"), guest, 4006),
                ("unknown role", "jazz", try server.invite(role: "dj"), guest, 4007),
                ("another server's", "jazz", otherServer, guest, 4013),
                ("no guest key", "jazz", try server.invite(), HTTPHeaders(), 4015),
            ]
            for (what, room, token, headers, code) in cases {
                let (refused, seen) = try session(server, room: room, token: token, headers: headers)
                defer { refused.shutdown() }
                #expect(refusal(seen) == code, "\(what): \(seen.all)")
            }
            // At the lobby: a room token and a room invite open one room, not the list.
            for (what, token) in [
                ("room token", try server.token("eve", role: "audience", room: "jazz")),
                ("room invite", try server.invite(room: "jazz")),
            ] {
                let recorder = DirectoryRecorder()
                let lobby = try DirectorySession(url: server.lobbyURL, token: token) { recorder.record($0) }
                lobby.start()
                let ended = recorder.wait { if case .ended = $0 { true } else { false } }
                #expect(
                    ended
                        == .ended(
                            .refused(code: 4016, reason: "This token opens one room; the lobby needs a server invite.")),
                    "\(what)")
                lobby.shutdown()
            }
            // The room is untouched by all of it.
            ana.send(#"{"cmd":"chat","text":"still here"}"#)
            try ana.expect("chat") { $0.string("text") == "still here" }

            // A room link for a room that ended: refused as the room ended.
            let link = try server.invite(room: "jazz")
            ana.send(#"{"cmd":"end_room"}"#)
            try ana.expect("room_ended")
            let (late, lateSeen) = try session(server, room: "jazz", token: link, headers: guest)
            defer { late.shutdown() }
            #expect(refusal(lateSeen) == 4009)
        }
    }

    /// One link, two people: each is who their key says, and the same key comes back as the same person.
    @Test(.timeLimit(.minutes(1))) func twoPeopleWithOneLinkAreTwoPeople() throws {
        try withServer { server, bots in
            let ana = try server.bot(try server.token("ana", role: "host", room: "jazz", name: "Ana"), room: "jazz")
            bots.append(ana)
            try ana.expect("joined")
            let link = try server.invite()
            let hanaKey = (0..<32).map { UInt8($0) }
            let (hana, hanaSeen) = try session(
                server, room: "jazz", token: link, headers: guestHeaders(name: "Hana Lee", key: hanaKey))
            defer { hana.shutdown() }
            let (ivo, ivoSeen) = try session(server, room: "jazz", token: link, headers: guestHeaders(name: "Ivo"))
            defer { ivo.shutdown() }
            let hanaID = try #require(snapshot(hanaSeen)?.selfID)
            let ivoID = try #require(snapshot(ivoSeen)?.selfID)
            #expect(hanaID != ivoID)
            #expect(hanaID.rawValue.hasPrefix("guest-") && hanaID.rawValue.count == 22)
            #expect(snapshot(hanaSeen)?.peers.first { $0.peer.id == hanaID }?.peer.name == "Hana Lee")
            #expect(snapshot(hanaSeen)?.peers.first { $0.peer.id == hanaID }?.peer.role == .audience)
            // The same key again: the same identity, taking over its own connection.
            let (again, againSeen) = try session(
                server, room: "jazz", token: link, headers: guestHeaders(name: "Hana", key: hanaKey))
            defer { again.shutdown() }
            #expect(snapshot(againSeen)?.selfID == hanaID)
            #expect(hanaSeen.wait { $0 == .ended(.replaced) } != nil)
        }
    }

    /// A host asks for a link from the room; the link opens the room in its role. Who may not make one is told.
    @Test(.timeLimit(.minutes(1))) func aLinkMadeInTheRoomOpensIt() throws {
        try withServer { server, bots in
            let (host, hostSeen) = try joinedSession(server, "ana", role: "host")
            defer { host.shutdown() }
            host.send(.createLink(role: .speaker, ttl: 600), id: .integer(5))
            let answer = hostSeen.wait {
                if case .message(let message) = $0, case .inviteLink = message.event { return true }
                return false
            }
            guard case .message(let message)? = answer,
                case .inviteLink(let room, let role, let token, let expiresAt, let id) = message.event
            else {
                Issue.record("no invite_link: \(hostSeen.all)")
                return
            }
            #expect(room == "lobby" && role == .speaker && id == .integer(5))
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(abs(expiresAt - (now + 600_000)) < 10_000)
            let (guest, guestSeen) = try session(
                server, room: "lobby", token: token, headers: guestHeaders(name: "Dara"))
            defer { guest.shutdown() }
            let me = snapshot(guestSeen).flatMap { snapshot in snapshot.peers.first { $0.peer.id == snapshot.selfID } }
            #expect(me?.peer.role == .speaker)
            // The link is for this room only.
            let (elsewhere, elsewhereSeen) = try session(
                server, room: "jazz", token: token, headers: guestHeaders(name: "Dara"))
            defer { elsewhere.shutdown() }
            #expect(refusal(elsewhereSeen) == 4006)

            let (listener, listenerSeen) = try joinedSession(server, "eli", role: "audience")
            defer { listener.shutdown() }
            listener.send(.createLink(role: .audience, ttl: 600), id: .integer(1))
            let refusedLink = listenerSeen.wait {
                if case .message(let message) = $0, case .error(.forbidden, _, .integer(1)) = message.event {
                    return true
                }
                return false
            }
            #expect(refusedLink != nil, "\(listenerSeen.all)")
            _ = bots
        }
    }

    /// A lobby flooding the directory with `list` is throttled, answered once with `rate_limited`, and keeps its
    /// connection; another lobby hears of a new room at once all the same.
    @Test(.timeLimit(.minutes(1))) func aDirectoryFloodCostsOnlyThatConnection() throws {
        try withServer { server, bots in
            let (flooder, flooderSeen) = try server.watchLobby()
            defer { flooder.stop() }
            let (calm, calmSeen) = try server.watchLobby()
            defer { calm.stop() }
            for _ in 0..<60 { flooder.refresh() }
            let limited = flooderSeen.wait {
                $0
                    == .error(
                        code: "rate_limited",
                        message: "too many requests: this one and the next are dropped until the rate falls")
            }
            #expect(limited != nil, "\(flooderSeen.all)")
            usleep(300_000)
            let lists = flooderSeen.all.filter { if case .rooms = $0 { true } else { false } }.count
            // The first list, and at most a burst of five answers.
            #expect(lists >= 2 && lists <= 6, "\(lists) lists")
            #expect(flooderSeen.all.filter { if case .error = $0 { true } else { false } }.count == 1)

            let ana = try server.bot(try server.token("ana", role: "host", room: "jazz", name: "Ana"), room: "jazz")
            bots.append(ana)
            try ana.expect("joined")
            #expect(calmSeen.waitFor(timeout: 5) { $0["jazz"] != nil })
            #expect(flooderSeen.waitFor(timeout: 5) { $0["jazz"] != nil })
            #expect(!flooderSeen.all.contains { if case .ended = $0 { true } else { false } })
        }
    }

    /// The media address a client learns is one it can reach: the loopback address only for a client on this
    /// machine; one elsewhere (here: a proxy says so) gets no UDP address and sends its media over the WebSocket.
    @Test(.timeLimit(.minutes(1))) func noClientElsewhereIsToldToSendToLoopback() throws {
        try withServer { server, _ in
            func offer(headers: HTTPHeaders) throws -> MediaOffer? {
                let offers = Mutex<[MediaOffer]>([])
                let recorder = SessionRecorder()
                let session = try RoomSession(
                    url: server.url(),
                    token: try server.token("p\(UInt32.random(in: 0...UInt32.max))", role: "audience"),
                    headers: headers,
                    media: { media in
                        if case .signal(.media(let offer)) = media { offers.withLock { $0.append(offer) } }
                    }
                ) { recorder.record($0) }
                defer { session.shutdown() }
                session.start()
                let deadline = Date().addingTimeInterval(10)
                while offers.withLock({ $0.isEmpty }), Date() < deadline { usleep(10_000) }
                return offers.withLock { $0.first }
            }
            let local = try #require(try offer(headers: HTTPHeaders()))
            #expect(local.host == "127.0.0.1" && local.port > 0)
            var forwarded = HTTPHeaders()
            forwarded.add("X-Forwarded-For", "203.0.113.7")
            let remote = try #require(try offer(headers: forwarded))
            #expect(!remote.hasUDP && remote.host == "" && remote.port == 0)
        }
    }
}
