import Foundation
import RoomClient
import RoomCore
import RoomProtocol
import RoomTesting
import Testing
import WebSocket

extension DirectoryRecorder {
    /// The answer to the request named `id`, waiting for it.
    func answer(_ id: String) -> DirectoryEvent? {
        wait(timeout: 30) {
            switch $0 {
            case .opened(_, _, let answered), .refused(_, _, let answered): answered == id
            default: false
            }
        }
    }

    /// What the directory told this lobby first about opening rooms.
    var welcome: DirectoryEvent? {
        all.first { if case .welcome = $0 { true } else { false } }
    }
}

extension DirectorySession {
    /// Sends `open_room` once the connection is up (a busy machine may have it reconnecting); false if it never is.
    func open(_ name: String, topic: String = "", id: String) -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if openRoom(name: name, topic: topic, id: id) { return true }
            usleep(20_000)
        }
        return false
    }
}

/// Issue 27: a room opened from the lobby, checked by the server per `serve --open-rooms`, and a few listeners'
/// names in the lobby's list.
@Suite(.ownThread, .serialized) struct LobbyOpenRoomTests {
    /// With the default (`hosts`), a host's lobby link opens a room: it is made with its topic, and the link the
    /// answer carries enters it as its host. The name is then taken (and stays taken across a restart); a bad
    /// name, and a listener's lobby link, are refused in words.
    @Test(.timeLimit(.minutes(2))) func aHostsLobbyLinkOpensARoomAndEntersItAsHost() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        let (lobby, seen) = try server.watchLobby(token: try server.invite(role: "host"))
        defer { lobby.stop() }
        #expect(seen.welcome == .welcome(openRooms: .hosts, mayOpen: true))
        #expect(lobby.open("jazz", topic: "Late night jazz", id: "open-1"))
        guard case .opened(let room, let invite, _)? = seen.answer("open-1") else {
            Issue.record("no answer: \(seen.all)")
            return
        }
        #expect(room == "jazz")
        let (hana, joined) = try session(server, room: "jazz", token: invite, headers: guestHeaders(name: "Hana"))
        defer { hana.leave() }
        let joinedAs = try #require(snapshot(joined), "\(joined.all)")
        #expect(joinedAs.topic == "Late night jazz")
        #expect(joinedAs.peers.first { $0.peer.id == joinedAs.selfID }?.peer.role == .host)
        #expect(seen.waitFor { $0["jazz"]?.stage == [.init(name: "Hana", role: .host)] }, "\(seen.rooms)")

        #expect(lobby.open("jazz", topic: "", id: "open-2"))
        #expect(
            seen.answer("open-2")
                == .refused(
                    code: "conflict",
                    message: "A room called jazz exists already on this server; choose another name, or join it "
                        + "from the list if it is live.", id: "open-2"))
        #expect(lobby.open("late night", topic: "", id: "open-3"))
        #expect(
            seen.answer("open-3")
                == .refused(
                    code: "bad_request",
                    message: "A room's name is 1 to 64 letters, digits, dashes (-), underscores (_) or dots (.), "
                        + "with no spaces.", id: "open-3"))
        // The link is for one person: someone else cannot come in with it too.
        let (other, refused) = try session(server, room: "jazz", token: invite, headers: guestHeaders(name: "Ivo"))
        defer { other.shutdown() }
        #expect(refusal(refused) == 4019)

        let (listener, heard) = try server.watchLobby(token: try server.invite(role: "audience"))
        defer { listener.stop() }
        #expect(heard.welcome == .welcome(openRooms: .hosts, mayOpen: false))
        #expect(listener.open("rust", topic: "", id: "open-1"))
        #expect(
            heard.answer("open-1")
                == .refused(
                    code: "forbidden",
                    message: "On this server only people who came in with a host's lobby link open rooms; ask a "
                        + "host for one.", id: "open-1"))
    }

    /// A person banned from the server's rooms opens none from the lobby: the lobby their client comes to with
    /// their key is closed with the ban's words. A lobby that does not say who it is may look at the list, but is
    /// told it may not open rooms, and is refused if it asks: a ban could not be checked.
    @Test(.timeLimit(.minutes(2))) func aBannedPersonOpensNoRoomAndAKeylessLobbyOpensNone() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        let (host, _) = try joinedSession(server, "ana", role: "host")
        defer { host.shutdown() }
        let key = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let (gus, gusSeen) = try session(
            server, room: "lobby", token: try server.invite(role: "speaker", room: "lobby"),
            headers: guestHeaders(name: "Gus", key: key))
        let gusID = try #require(snapshot(gusSeen)?.selfID, "\(gusSeen.all)")
        host.send(.remove(gusID, reason: "spam", ban: true), id: .integer(1))
        #expect(gusSeen.wait { $0 == .ended(.removed) } != nil, "\(gusSeen.all)")
        gus.shutdown()

        let banned = DirectoryRecorder()
        let lobby = try DirectorySession(
            url: server.lobbyURL, token: try server.invite(role: "host"), headers: guestHeaders(name: "Gus", key: key)
        ) { banned.record($0) }
        lobby.start()
        defer { lobby.stop() }
        let ended = banned.wait(timeout: 20) { if case .ended = $0 { true } else { false } }
        #expect(
            ended == .ended(.refused(code: 4025, reason: "You are banned from this server's rooms.")), "\(banned.all)")
        #expect(!banned.all.contains { if case .rooms = $0 { true } else { false } }, "\(banned.all)")

        // Someone else with the same host's lobby link, whose client sends no key.
        let (keyless, seen) = try server.watchLobby(token: try server.invite(role: "host"), headers: HTTPHeaders())
        defer { keyless.stop() }
        #expect(seen.welcome == .welcome(openRooms: .hosts, mayOpen: false))
        #expect(keyless.open("jazz", topic: "", id: "open-1"))
        #expect(
            seen.answer("open-1")
                == .refused(
                    code: "forbidden",
                    message: "Opening a room needs your client's key, which Clubroom sends only over wss:// or to "
                        + "this machine; ask the host for a wss:// link.", id: "open-1"))
    }

    /// The answer to `open_room` can be lost (the lobby's connection drops before it comes): its opener, asking
    /// again for the room while nobody has entered it, gets a new host's link, and the first no longer works.
    /// Anyone else is told the name is taken, and so is the opener once the room was entered.
    @Test(.timeLimit(.minutes(2))) func theOpenerAskingAgainGetsANewLinkUntilTheRoomIsEntered() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        let key = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let token = try server.invite(role: "host")
        let (lobby, seen) = try server.watchLobby(token: token, headers: guestHeaders(name: "Hana", key: key))
        defer { lobby.stop() }
        #expect(lobby.open("jazz", topic: "Late night jazz", id: "open-1"))
        guard case .opened(_, let first, _)? = seen.answer("open-1") else {
            Issue.record("no answer: \(seen.all)")
            return
        }
        // The same person from another lobby, as after a dropped connection.
        let (again, heard) = try server.watchLobby(token: token, headers: guestHeaders(name: "Hana", key: key))
        defer { again.stop() }
        #expect(again.open("jazz", topic: "Late night jazz", id: "open-2"))
        guard case .opened(let room, let second, _)? = heard.answer("open-2") else {
            Issue.record("no answer: \(heard.all)")
            return
        }
        #expect(room == "jazz")
        #expect(second != first)
        let taken = DirectoryEvent.refused(
            code: "conflict",
            message: "A room called jazz exists already on this server; choose another name, or join it from the "
                + "list if it is live.", id: "open-3")
        let (other, otherSeen) = try server.watchLobby(token: token)
        defer { other.stop() }
        #expect(other.open("jazz", id: "open-3"))
        #expect(otherSeen.answer("open-3") == taken)

        let (stale, staleSeen) = try session(
            server, room: "jazz", token: first, headers: guestHeaders(name: "Hana", key: key))
        stale.shutdown()
        #expect(refusal(staleSeen) == 4018, "\(staleSeen.all)")
        let (hana, joined) = try session(
            server, room: "jazz", token: second, headers: guestHeaders(name: "Hana", key: key))
        defer { hana.leave() }
        let joinedAs = try #require(snapshot(joined), "\(joined.all)")
        #expect(joinedAs.topic == "Late night jazz")
        #expect(again.open("jazz", id: "open-3"))
        #expect(heard.answer("open-3") == taken)
    }

    /// A room opened but never entered is still a room: its name stays taken after a restart.
    @Test(.timeLimit(.minutes(2))) func anOpenedRoomIsKeptAcrossARestart() throws {
        let first = try ServerProcess()
        let (lobby, seen) = try first.watchLobby(token: try first.invite(role: "host"))
        #expect(lobby.open("quiet", topic: "Nobody yet", id: "open-1"))
        guard case .opened? = seen.answer("open-1") else {
            Issue.record("no answer: \(seen.all)")
            lobby.stop()
            first.stopAndClean()
            return
        }
        lobby.stop()
        first.stop()
        let second = try ServerProcess(directory: first.directory)
        defer { second.stopAndClean() }
        let (again, heard) = try second.watchLobby(token: try second.invite(role: "host"))
        defer { again.stop() }
        #expect(again.open("quiet", topic: "", id: "open-1"))
        guard case .refused(let code, _, _)? = heard.answer("open-1") else {
            Issue.record("no refusal: \(heard.all)")
            return
        }
        #expect(code == "conflict")
    }

    /// `--open-rooms nobody` refuses everyone; `--open-rooms anyone` lets a listener's lobby link open a room.
    @Test(.timeLimit(.minutes(2))) func thePolicyDecidesWhoOpensRooms() throws {
        let closed = try ServerProcess(extraArguments: ["--open-rooms", "nobody"])
        defer { closed.stopAndClean() }
        let (host, seen) = try closed.watchLobby(token: try closed.invite(role: "host"))
        defer { host.stop() }
        #expect(seen.welcome == .welcome(openRooms: .nobody, mayOpen: false))
        #expect(host.open("jazz", topic: "", id: "x"))
        #expect(
            seen.answer("x")
                == .refused(
                    code: "forbidden",
                    message: "This server does not let people open rooms from the lobby; ask its operator for a "
                        + "host's link (clubroom invite --room NAME --role host).", id: "x"))

        let open = try ServerProcess(extraArguments: ["--open-rooms", "anyone"])
        defer { open.stopAndClean() }
        let (listener, heard) = try open.watchLobby(token: try open.invite(role: "audience"))
        defer { listener.stop() }
        #expect(heard.welcome == .welcome(openRooms: .anyone, mayOpen: true))
        #expect(listener.open("jazz", topic: "", id: "y"))
        guard case .opened(let room, let invite, _)? = heard.answer("y") else {
            Issue.record("no answer: \(heard.all)")
            return
        }
        #expect(room == "jazz")
        let (gus, joined) = try session(open, room: "jazz", token: invite, headers: guestHeaders(name: "Gus"))
        defer { gus.leave() }
        let joinedAs = try #require(snapshot(joined))
        #expect(joinedAs.peers.first { $0.peer.id == joinedAs.selfID }?.peer.role == .host)
    }

    /// The lobby names a few listeners, those who came first, and never more than five however many listen.
    @Test(.timeLimit(.minutes(2))) func theListNamesAFewListeners() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        let (lobby, seen) = try server.watchLobby()
        defer { lobby.stop() }
        var sessions: [RoomSession] = []
        defer { for session in sessions { session.leave() } }
        let token = try server.invite(role: "audience", room: "big")
        for name in ["Ana", "Bo", "Chen", "Dara", "Eli", "Fay", "Gus"] {
            let (session, joined) = try session(server, room: "big", token: token, headers: guestHeaders(name: name))
            #expect(snapshot(joined) != nil, "\(name): \(joined.all)")
            sessions.append(session)
        }
        #expect(
            seen.waitFor(timeout: 30) {
                $0["big"]?.listeners == 7 && $0["big"]?.audience == ["Ana", "Bo", "Chen", "Dara", "Eli"]
            },
            "\(seen.rooms)")
        // The first listener leaves: the next who came first takes the place.
        sessions.removeFirst().leave()
        #expect(
            seen.waitFor(timeout: 30) {
                $0["big"]?.listeners == 6 && $0["big"]?.audience == ["Bo", "Chen", "Dara", "Eli", "Fay"]
            },
            "\(seen.rooms)")
    }
}
