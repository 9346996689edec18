import RoomApp
import RoomCore
import RoomTesting
import Testing

@testable import TermUI

/// The lobby at a fixed time: 21:00 on the day of the examples.
let lobbyNow: Timestamp = 1_764_450_000_000

func room(
    _ name: String, topic: String = "", stage: [(String, RoleName)] = [("Ana", .host)], listeners: Int,
    hands: Int = 0, minutesAgo: Int64 = 12
) -> RoomListing {
    RoomListing(
        room: name, topic: topic, stage: stage.map { .init(name: $0.0, role: $0.1) }, onStage: stage.count,
        listeners: listeners, raisedHands: hands, startedAt: lobbyNow - minutesAgo * 60_000)
}

/// Three live rooms, as the sketches show them.
let sampleRooms = [
    room(
        "lobby", topic: "Friday terminal hour",
        stage: [("Ana", .host), ("Bo", .moderator), ("Chen", .speaker), ("Dara", .speaker)], listeners: 1204, hands: 3,
        minutesAgo: 72),
    room("rust", topic: "Rust on Linux", stage: [("Eli", .host)], listeners: 87, minutesAgo: 3),
    room("quiet", stage: [], listeners: 2, minutesAgo: 0),
]

func lobby(lineMode: Bool = false, rooms: [RoomListing] = sampleRooms) -> (LobbyState, [LobbyEffect]) {
    var state = LobbyState(server: "rooms.example.org", lineMode: lineMode)
    let effects = reduceLobby(&state, .directory(.rooms(rooms), at: lobbyNow))
    return (state, effects)
}

func lobbyKeys(_ state: inout LobbyState, _ keys: Key...) -> [LobbyEffect] {
    keys.flatMap { reduceLobby(&state, .key($0, at: lobbyNow)) }
}

func renderLobby(_ state: LobbyState, width: Int = 80, height: Int = 24, ascii: Bool = false) -> CellBuffer {
    var buffer = CellBuffer(width: width, height: height)
    LobbyScreen.render(LobbyScreenMapper.model(state), into: &buffer, theme: Theme(level: .none, ascii: ascii))
    return buffer
}

@Suite struct LobbyReducerTests {
    @Test func roomsAreSortedByListenersAndTheFirstIsSelected() {
        let (state, effects) = lobby()
        #expect(state.order == ["lobby", "rust", "quiet"])
        #expect(state.selected == "lobby" && state.connection == .connected && state.listed)
        #expect(effects.isEmpty)
    }

    @Test func theSelectionStaysOnItsRoomWhileTheOrderChanges() {
        var (state, _) = lobby()
        _ = lobbyKeys(&state, .down)
        #expect(state.selected == "rust")
        // Rust overtakes the lobby: the selection moves with it, to the top.
        _ = reduceLobby(
            &state,
            .directory(
                .changed([.updated(room("rust", topic: "Rust on Linux", stage: [("Eli", .host)], listeners: 5000))]),
                at: lobbyNow))
        #expect(state.order == ["rust", "lobby", "quiet"] && state.selected == "rust")
        // Its room ends: the selection takes whatever sits where it was.
        _ = reduceLobby(&state, .directory(.changed([.removed(room: "rust", .ended)]), at: lobbyNow))
        #expect(state.order == ["lobby", "quiet"] && state.selected == "lobby")
        _ = lobbyKeys(&state, .end)
        #expect(state.selected == "quiet")
        _ = reduceLobby(&state, .directory(.changed([.removed(room: "quiet", .empty)]), at: lobbyNow))
        #expect(state.selected == "lobby")
        _ = reduceLobby(&state, .directory(.changed([.removed(room: "lobby", .unlisted)]), at: lobbyNow))
        #expect(state.selected == nil && state.order.isEmpty)
        #expect(lobbyKeys(&state, .enter) == [.say("No live room to join yet.")])
    }

    @Test func startsAndEndsAreAnnouncedAndCountsAreNot() {
        var (state, _) = lobby()
        let started = reduceLobby(
            &state,
            .directory(
                .changed([
                    .added(room("jazz", topic: "Late night jazz", stage: [("Fay", .host)], listeners: 0), .started)
                ]), at: lobbyNow))
        #expect(started == [.say("Room started: Late night jazz (jazz). Fay (host) on stage.")])
        let counted = reduceLobby(
            &state,
            .directory(
                .changed([.updated(room("jazz", topic: "Late night jazz", stage: [("Fay", .host)], listeners: 40))]),
                at: lobbyNow))
        #expect(counted.isEmpty)
        let retopic = reduceLobby(
            &state,
            .directory(
                .changed([.updated(room("jazz", topic: "Jazz till late", stage: [("Fay", .host)], listeners: 40))]),
                at: lobbyNow))
        #expect(retopic == [.say("jazz is now \"Jazz till late\".")])
        let ended = reduceLobby(
            &state,
            .directory(
                .changed([
                    .removed(room: "jazz", .ended), .removed(room: "quiet", .empty), .removed(room: "rust", .unlisted),
                ]), at: lobbyNow))
        #expect(
            ended == [
                .say("Room ended: Jazz till late (jazz)."), .say("Room ended: quiet; everyone left."),
                .say("No longer listed: Rust on Linux (rust)."),
            ])
        #expect(state.happenings.count == 5)
        // A change the lobby's list already held is no news.
        let repeated = reduceLobby(
            &state, .directory(.changed([.added(room("lobby", listeners: 1204), .started)]), at: lobbyNow))
        #expect(repeated.isEmpty)
    }

    @Test func enterJoinsAndNothingElseRunsUntilThePersonIsBack() {
        var (state, _) = lobby()
        #expect(lobbyKeys(&state, .down, .enter) == [.join("rust")])
        #expect(state.joining == "rust")
        #expect(lobbyKeys(&state, .down, .enter, .char("q")).isEmpty)
        _ = reduceLobby(&state, .returned(from: "rust", problem: nil, at: lobbyNow))
        #expect(state.joining == nil && state.notice == nil)
        _ = reduceLobby(&state, .returned(from: "rust", problem: "The room has ended.", at: lobbyNow))
        #expect(state.notice == Notice(.error, "The room has ended."))
        #expect(lobbyKeys(&state, .char("q")) == [.quit])
        #expect(state.quitting)
    }

    @Test func refreshHelpAndUnknownKeys() {
        var (state, _) = lobby()
        #expect(lobbyKeys(&state, .char("r")) == [.refresh])
        #expect(lobbyKeys(&state, .char("z")) == [.say("The key z does nothing here; press ? for the keys.")])
        _ = lobbyKeys(&state, .escape)
        #expect(state.notice == nil)
        _ = lobbyKeys(&state, .char("?"))
        #expect(state.notice?.text.contains("Enter joins it") == true)
        // Notices go after six seconds.
        _ = reduceLobby(&state, .tick(lobbyNow + 6000))
        #expect(state.notice == nil)
    }

    @Test func aLobbyThatNeverOpensEndsWithWhy() {
        var state = LobbyState(server: "rooms.example.org")
        let effects = reduceLobby(
            &state, .directory(.ended("This link has expired. Ask the host for a new one."), at: lobbyNow))
        #expect(effects == [.quit])
        #expect(state.quitting && state.failure == "This link has expired. Ask the host for a new one.")
    }

    @Test func aLostConnectionIsSaidAndStays() {
        var (state, _) = lobby()
        _ = reduceLobby(&state, .directory(.reconnecting(attempt: 2), at: lobbyNow))
        #expect(state.connection == .reconnecting(attempt: 2))
        _ = reduceLobby(&state, .directory(.ended("This link has expired. Ask the host for a new one."), at: lobbyNow))
        #expect(state.notice == Notice(.error, "This link has expired. Ask the host for a new one. Press q to quit."))
        _ = reduceLobby(&state, .tick(lobbyNow + 60_000))
        #expect(state.notice != nil)
    }
}

@Suite struct LobbyLineModeTests {
    @Test func theListIsNumberedAndANumberJoins() {
        var (state, effects) = lobby(lineMode: true)
        #expect(
            effects == [
                .say(
                    """
                    Lobby of rooms.example.org. 3 live rooms, most listeners first:
                    1. Friday terminal hour (lobby): 1,204 listening, 3 hands up; on stage: Ana (host), Bo (moderator), Chen and Dara; started 1 hour ago.
                    2. Rust on Linux (rust): 87 listening; on stage: Eli (host); started 3 minutes ago.
                    3. quiet: 2 listening; on stage: nobody; started just now.
                    Type a number or a room's name to join; /rooms lists them again; /quit leaves.
                    """)
            ])
        #expect(
            reduceLobby(&state, .line(" 2 ", at: lobbyNow)) == [.say("Joining Rust on Linux (rust)."), .join("rust")])
    }

    /// Issue 27 (polish): an empty lobby said only that it was empty and how to leave.
    @Test func anEmptyLobbySaysWhatAPersonCanDo() {
        var (state, effects) = lobby(lineMode: true, rooms: [])
        let advice =
            "No live rooms right now; new rooms are announced here as they start. Have a link to a room? Type "
            + "/quit, then run: clubroom join LINK. To start a room, its host joins it with a host's room link "
            + "(clubroom invite --room NAME --role host, on the server). Or wait here; /quit leaves."
        #expect(effects == [.say("Lobby of rooms.example.org. " + advice)])
        #expect(reduceLobby(&state, .line("/rooms", at: lobbyNow)) == [.say(advice)])
    }

    @Test func namesTopicsAndCommands() {
        var (state, _) = lobby(lineMode: true)
        #expect(reduceLobby(&state, .line("/join quiet", at: lobbyNow)) == [.say("Joining quiet."), .join("quiet")])
        _ = reduceLobby(&state, .returned(from: "quiet", problem: nil, at: lobbyNow))
        #expect(reduceLobby(&state, .line("LOBBY", at: lobbyNow)).last == .join("lobby"))
        _ = reduceLobby(&state, .returned(from: "lobby", problem: nil, at: lobbyNow))
        #expect(reduceLobby(&state, .line("rust on", at: lobbyNow)).last == .join("rust"))
        _ = reduceLobby(&state, .returned(from: "rust", problem: nil, at: lobbyNow))
        #expect(
            reduceLobby(&state, .line("9", at: lobbyNow)) == [
                .say("There is no room 9 in the list; /rooms lists them again.")
            ])
        #expect(
            reduceLobby(&state, .line("jazz", at: lobbyNow)) == [
                .say("No live room is called \"jazz\"; /rooms lists them.")
            ])
        #expect(
            reduceLobby(&state, .line("/dance", at: lobbyNow)) == [
                .say("Unknown command /dance. " + LobbyNarration.help)
            ])
        #expect(reduceLobby(&state, .line("/quit", at: lobbyNow)) == [.say("Leaving the lobby."), .quit])
    }

    @Test func linesTypedBeforeTheListWaitForIt() {
        var state = LobbyState(server: "rooms.example.org", lineMode: true)
        #expect(reduceLobby(&state, .line("1", at: lobbyNow)).isEmpty)
        let effects = reduceLobby(&state, .directory(.rooms(sampleRooms), at: lobbyNow))
        #expect(effects.count == 3 && effects.last == .join("lobby"))
    }

    @Test func backFromARoomTheListIsSaidAgain() {
        var (state, _) = lobby(lineMode: true)
        _ = reduceLobby(&state, .line("1", at: lobbyNow))
        let back = reduceLobby(&state, .returned(from: "lobby", problem: nil, at: lobbyNow))
        #expect(back.first == .say("Back in the lobby, from lobby."))
        #expect(back.count == 2)
    }
}

@Suite struct LobbyGoldenTests {
    @Test func theLobbyAt80x24() {
        var (state, _) = lobby()
        _ = reduceLobby(
            &state,
            .directory(
                .changed([
                    .added(
                        room("jazz", topic: "Late night jazz", stage: [("Fay", .host)], listeners: 0, minutesAgo: 0),
                        .started)
                ]), at: lobbyNow))
        _ = reduceLobby(&state, .directory(.changed([.removed(room: "morning", .ended)]), at: lobbyNow))
        _ = lobbyKeys(&state, .down)
        expectGolden("lobby-80x24", renderLobby(state))
    }

    @Test func theLobbyAt40x12() {
        var (state, _) = lobby()
        _ = lobbyKeys(&state, .down, .down)
        expectGolden("lobby-40x12", renderLobby(state, width: 40, height: 12))
    }

    @Test func theLobbyInASCII() {
        let (state, _) = lobby()
        expectGolden("lobby-ascii-80x24", renderLobby(state, ascii: true))
    }

    @Test func anEmptyLobbyAndAConnectingOne() {
        let (empty, _) = lobby(rooms: [])
        // Issue 27 (polish): the empty lobby says what a person can do, under the sentence that it is empty.
        expectGolden("lobby-empty-80x24", renderLobby(empty, height: 10))
        let connecting = LobbyState(server: "rooms.example.org")
        expectGolden("lobby-connecting-80x24", renderLobby(connecting, height: 8))
    }

    @Test func joiningAndAProblem() {
        var (state, _) = lobby()
        _ = lobbyKeys(&state, .enter)
        expectGolden("lobby-joining-80x24", renderLobby(state, height: 10))
        _ = reduceLobby(&state, .returned(from: "lobby", problem: "The room this link is for has ended.", at: lobbyNow))
        expectGolden("lobby-problem-80x24", renderLobby(state, height: 10))
    }

    /// A long list scrolls to keep the selection in view and says there is more.
    @Test func aLongListScrolls() {
        var (state, _) = lobby(rooms: (0..<30).map { room("r\($0)", topic: "Room number \($0)", listeners: 100 - $0) })
        for _ in 0..<12 { _ = lobbyKeys(&state, .down) }
        expectGolden("lobby-scrolled-80x24", renderLobby(state))
    }

    /// Every size down to nothing draws inside the buffer without trapping.
    @Test func everySizeDraws() {
        let (state, _) = lobby()
        for width in 0...12 {
            for height in 0...6 { _ = renderLobby(state, width: width, height: height) }
        }
    }
}

/// A room's link, asked for from the room: it goes to the event pane (which opens) and line mode says it.
@Suite struct RoomLinkTests {
    @Test func theLinkIsSaidWithHowLongItLasts() {
        for (lasting, words) in [
            (7 * 86_400_000 - 900, "7 days"), (7_199_400, "2 hours"), (5_400_000, "90 minutes"), (42_000, "42 seconds"),
        ] {
            var state = AppState(roles: roles, lineMode: true)
            _ = reduceApp(&state, .roles(roles))
            _ = reduceApp(
                &state,
                .server(
                    .joined(
                        RoomSnapshot(
                            roomID: "jazz", selfID: "ana", peers: [Peer(id: "ana", name: "Ana", role: .host)], seq: 1)),
                    seq: 1, at: lobbyNow))
            let link = InviteLink(
                room: "jazz", role: .speaker, link: "wss://rooms.example.org/rooms/jazz#invite=a.b.c",
                expiresAt: lobbyNow + Int64(lasting))
            let effects = reduceApp(&state, .server(.inviteLink(link), seq: 0, at: lobbyNow))
            #expect(
                effects.contains(
                    .say("Invite link for speakers, valid \(words): wss://rooms.example.org/rooms/jazz#invite=a.b.c")),
                "\(effects)")
        }
    }

    @Test func onScreenThePaneOpensAndANoticeSaysSo() {
        var state = AppState(roles: roles)
        _ = reduceApp(&state, .roles(roles))
        _ = reduceApp(
            &state,
            .server(
                .joined(
                    RoomSnapshot(
                        roomID: "jazz", selfID: "ana", peers: [Peer(id: "ana", name: "Ana", role: .host)], seq: 1)),
                seq: 1, at: lobbyNow))
        // The pane shows by default; hidden with Tab, the link opens it again.
        _ = reduceApp(&state, .key(.tab, at: lobbyNow))
        #expect(!state.chatVisible)
        let link = InviteLink(
            room: "jazz", role: .audience, link: "ws://h/rooms/jazz#invite=a.b.c", expiresAt: lobbyNow + 3_600_000)
        _ = reduceApp(&state, .server(.inviteLink(link), seq: 0, at: lobbyNow))
        #expect(state.chatVisible)
        let notice = "Your invite link is in the event pane: copy every line of it. Tab hides it."
        #expect(state.notice == Notice(.info, notice))
        #expect(state.log.contains(.event("Invite link for listeners, valid 1 hour: ws://h/rooms/jazz#invite=a.b.c")))
    }

    @Test func theRoomsLinksAreSaidWithTheirIDs() {
        var state = AppState(roles: roles, lineMode: true)
        _ = reduceApp(&state, .roles(roles))
        _ = reduceApp(
            &state,
            .server(
                .joined(
                    RoomSnapshot(
                        roomID: "jazz", selfID: "ana", peers: [Peer(id: "ana", name: "Ana", role: .host)], seq: 1)),
                seq: 1, at: lobbyNow))
        let links = [
            RoomLink(
                id: "abc", role: .speaker, by: "ana", expiresAt: lobbyNow + 7_200_000, uses: 2, maxUses: 5,
                withdrawn: false),
            RoomLink(
                id: "xyz", role: .audience, by: "", expiresAt: lobbyNow + 60_000, uses: 9, maxUses: nil, withdrawn: true
            ),
        ]
        let effects = reduceApp(
            &state, .server(.links(links, withdrawn: ["xyz"], locked: false), seq: 0, at: lobbyNow))
        #expect(
            effects.contains(
                .say(
                    "Withdrew link xyz. Links to this room, 1 working (/revoke ID withdraws one, /revoke all every "
                        + "one): abc for speakers by you, used 2 of 5, works 2 hours more; xyz for listeners by the "
                        + "server's operator, used 9, withdrawn.")),
            "\(effects)")
        let none = reduceApp(&state, .server(.links([], withdrawn: [], locked: false), seq: 0, at: lobbyNow))
        #expect(none.contains(.say("This room has no links.")), "\(none)")
        let locked = reduceApp(&state, .server(.links([], withdrawn: [], locked: true), seq: 0, at: lobbyNow))
        #expect(
            locked.contains(
                .say(
                    "The room is locked: newcomers with a link wait for /admit or /deny (/unlock opens it). This room "
                        + "has no links.")),
            "\(locked)")
    }

    /// A newcomer at a locked room is told they wait; a host hears of them with the commands that answer, on the
    /// notice row as in line mode, and of what became of them.
    @Test func aWaitingNewcomerAndTheirKnockAreSaid() {
        var waiter = AppState(roles: roles, lineMode: true)
        _ = reduceApp(&waiter, .roles(roles))
        let waiting = reduceApp(&waiter, .server(.waitingForHost, seq: 0, at: lobbyNow))
        #expect(
            waiting.contains(
                .say(
                    "This room is locked: you are waiting for a host to let you in. You see and hear nothing of it "
                        + "until then.")),
            "\(waiting)")

        var host = AppState(roles: roles, lineMode: false)
        _ = reduceApp(&host, .roles(roles))
        _ = reduceApp(
            &host,
            .server(
                .joined(
                    RoomSnapshot(
                        roomID: "jazz", selfID: "ana", peers: [Peer(id: "ana", name: "Ana", role: .host)], seq: 1)),
                seq: 1, at: lobbyNow))
        _ = reduceApp(
            &host, .server(.knock(Knock(peer: "guest-01", name: "Eve", state: .waiting)), seq: 0, at: lobbyNow))
        let asked = "Eve is waiting to come in: /admit Eve lets them in, /deny Eve turns them away."
        #expect(host.notice?.text == asked)
        #expect(host.log.contains(.event(asked)))
        _ = reduceApp(
            &host,
            .server(.knock(Knock(peer: "guest-01", name: "Eve", state: .denied, by: "ana")), seq: 0, at: lobbyNow))
        #expect(host.log.contains(.event("You turned Eve away.")), "\(host.log)")
        #expect(
            Command.parse("/admit guest-01", peers: [], roles: roles) == .success(.admit("guest-01")))
        #expect(Command.parse("/deny Eve", peers: [], roles: roles) == .success(.deny("Eve")))
    }

    @Test func listingChangesAreSaid() {
        var state = AppState(roles: roles, lineMode: true)
        _ = reduceApp(&state, .roles(roles))
        _ = reduceApp(
            &state,
            .server(
                .joined(
                    RoomSnapshot(
                        roomID: "jazz", selfID: "eli",
                        peers: [Peer(id: "ana", name: "Ana", role: .host), Peer(id: "eli", name: "Eli")], seq: 1)),
                seq: 1, at: lobbyNow))
        let effects = reduceApp(&state, .server(.listingChanged(listed: false, by: "ana"), seq: 2, at: lobbyNow))
        #expect(
            effects.contains(.say("Ana unlisted the room: it no longer shows in the lobby; links to it still work.")))
        #expect(!state.room.listed)
        #expect(reduceApp(&state, .line("/unlist", at: lobbyNow)) == [.say("Only hosts can list or unlist the room.")])
    }
}
