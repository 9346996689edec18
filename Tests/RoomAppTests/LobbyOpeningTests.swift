import RoomApp
import RoomCore
import RoomTesting
import TermUI
import Testing

/// A lobby this server lets open rooms (`--open-rooms` allows this link), with `rooms` live.
func openingLobby(
    lineMode: Bool = false, mayOpen: Bool = true, rule: OpenRoomsPolicy = .hosts, rooms: [RoomListing] = []
)
    -> LobbyState
{
    var state = LobbyState(server: "rooms.example.org", lineMode: lineMode)
    _ = reduceLobby(&state, .directory(.welcome(openRooms: rule, mayOpen: mayOpen), at: lobbyNow))
    _ = reduceLobby(&state, .directory(.rooms(rooms), at: lobbyNow))
    return state
}

func typeInLobby(_ state: inout LobbyState, _ text: String) -> [LobbyEffect] {
    text.flatMap { reduceLobby(&state, .key(.char($0), at: lobbyNow)) }
}

/// Issue 27: starting a room from the lobby, action by action.
@Suite struct LobbyOpeningTests {
    @Test func nAsksForANameAndATopicThenTheServerOpensTheRoomAndTheLobbyEntersIt() {
        var state = openingLobby()
        #expect(state.mayOpen && state.openRooms == .hosts)
        #expect(lobbyKeys(&state, .char("n")).isEmpty)
        #expect(state.form == OpenRoomForm())
        #expect(typeInLobby(&state, "jazz").isEmpty)
        #expect(state.form?.name.text == "jazz" && state.form?.onTopic == false)
        #expect(lobbyKeys(&state, .enter).isEmpty)
        #expect(state.form?.onTopic == true)
        #expect(typeInLobby(&state, "Late night jazz").isEmpty)
        #expect(state.form?.topic.text == "Late night jazz")
        #expect(lobbyKeys(&state, .enter) == [.openRoom(name: "jazz", topic: "Late night jazz", id: "open-1")])
        #expect(state.form?.sent == "open-1")
        // Keys wait for the answer: nothing is sent twice.
        #expect(lobbyKeys(&state, .enter).isEmpty)
        // An answer to another request is not this one.
        #expect(reduceLobby(&state, .directory(.opened(room: "jazz", invite: "T", id: "open-0"), at: lobbyNow)).isEmpty)
        #expect(
            reduceLobby(&state, .directory(.opened(room: "jazz", invite: "HOST-LINK", id: "open-1"), at: lobbyNow))
                == [.enter(room: "jazz", invite: "HOST-LINK")])
        #expect(state.form == nil && state.joining == "jazz")
        // Back from the room, the lobby is as before.
        _ = reduceLobby(&state, .returned(from: "jazz", problem: nil, at: lobbyNow))
        #expect(state.joining == nil)
    }

    @Test func aRefusalStaysInTheDialogSoTheNameCanBeChanged() {
        var state = openingLobby()
        _ = lobbyKeys(&state, .char("n"))
        _ = typeInLobby(&state, "jazz")
        _ = lobbyKeys(&state, .enter, .enter)
        let taken = "A room called jazz exists already on this server; choose another name."
        #expect(reduceLobby(&state, .directory(.openRefused(taken, id: "open-1"), at: lobbyNow)).isEmpty)
        #expect(state.form?.problem == taken && state.form?.sent == nil)
        _ = lobbyKeys(&state, .tab, .backspace)
        #expect(state.form?.name.text == "jaz" && state.form?.problem == nil)
        _ = typeInLobby(&state, "z2")
        #expect(lobbyKeys(&state, .enter, .enter) == [.openRoom(name: "jazz2", topic: "", id: "open-2")])
    }

    @Test func aBadNameIsSaidAtOnceAndNothingIsSent() {
        var state = openingLobby()
        _ = lobbyKeys(&state, .char("n"))
        #expect(lobbyKeys(&state, .enter).isEmpty)
        #expect(state.form?.problem == "Type the room's name first.")
        _ = typeInLobby(&state, "late night")
        #expect(lobbyKeys(&state, .enter).isEmpty)
        #expect(
            state.form?.problem
                == "A room's name is 1 to 64 letters, digits, dashes (-), underscores (_) or dots (.), with no spaces.")
        #expect(state.form?.onTopic == false && state.form?.sent == nil)
    }

    @Test func escCancelsAndALateAnswerIsNotActedOn() {
        var state = openingLobby()
        _ = lobbyKeys(&state, .char("n"))
        _ = typeInLobby(&state, "jazz")
        _ = lobbyKeys(&state, .enter, .enter)
        #expect(lobbyKeys(&state, .escape).isEmpty)
        #expect(state.form == nil)
        #expect(reduceLobby(&state, .directory(.opened(room: "jazz", invite: "T", id: "open-1"), at: lobbyNow)).isEmpty)
        #expect(state.joining == nil)
        // `q` quits again once the dialog is closed.
        #expect(lobbyKeys(&state, .char("q")) == [.quit])
    }

    @Test func whereTheLinkMayNotOpenRoomsNSaysWhoMay() {
        var hosts = openingLobby(mayOpen: false, rule: .hosts)
        #expect(
            lobbyKeys(&hosts, .char("n")) == [
                .say("Only people with a host's lobby link open rooms here; ask a host for one.")
            ])
        #expect(hosts.form == nil && hosts.notice?.kind == .refusal)
        var nobody = openingLobby(mayOpen: false, rule: .nobody)
        #expect(
            lobbyKeys(&nobody, .char("n")) == [
                .say("Rooms are not opened from this lobby; ask the operator for a host's link.")
            ])
        // An older server says nothing: nobody opens rooms there.
        var (old, _) = lobby()
        #expect(lobbyKeys(&old, .char("n")) == lobbyKeys(&nobody, .char("n")))
    }

    @Test func theEmptyLobbySaysPressNWhereItWorks() {
        let state = openingLobby()
        #expect(
            LobbyScreenMapper.emptyAdvice(state)[1]
                == "Press n to start a room: you give it a name and a topic, and you are its host.")
        #expect(LobbyScreen.hints(for: LobbyScreenMapper.model(state), glyphs: .unicode).map(\.key) == ["n", "q", "r"])
        let hostsOnly = openingLobby(mayOpen: false)
        #expect(
            LobbyScreenMapper.emptyAdvice(hostsOnly)[1]
                == "On this server, people with a host's lobby link start rooms (n); ask a host for one, or for a "
                + "link to their room.")
        #expect(LobbyScreen.hints(for: LobbyScreenMapper.model(hostsOnly), glyphs: .unicode).map(\.key) == ["q", "r"])
    }

    @Test func lineModeOpensWithSlashOpen() {
        var state = openingLobby(lineMode: true)
        #expect(
            reduceLobby(&state, .line("/open jazz Late night jazz", at: lobbyNow)) == [
                .say("Asking the server to open jazz."),
                .openRoom(name: "jazz", topic: "Late night jazz", id: "open-1"),
            ])
        #expect(
            reduceLobby(&state, .directory(.opened(room: "jazz", invite: "L", id: "open-1"), at: lobbyNow)) == [
                .say("Opened jazz; entering it as its host."), .enter(room: "jazz", invite: "L"),
            ])
        _ = reduceLobby(&state, .returned(from: "jazz", problem: nil, at: lobbyNow))
        #expect(
            reduceLobby(&state, .line("/open late night", at: lobbyNow)).last
                == .openRoom(name: "late", topic: "night", id: "open-2"))
        #expect(
            reduceLobby(
                &state, .directory(.openRefused("A room called late exists already.", id: "open-2"), at: lobbyNow))
                == [.say("A room called late exists already.")])
        #expect(
            reduceLobby(&state, .line("/open", at: lobbyNow)) == [
                .say("Say the new room's name and topic: /open NAME TOPIC, e.g. /open jazz Late night jazz.")
            ])
        var refused = openingLobby(lineMode: true, mayOpen: false, rule: .nobody)
        #expect(
            reduceLobby(&refused, .line("/open jazz", at: lobbyNow)) == [
                .say("Rooms are not opened from this lobby; ask the operator for a host's link.")
            ])
    }

    @Test func aDroppedConnectionWhileWaitingIsSaid() {
        var state = openingLobby()
        _ = lobbyKeys(&state, .char("n"))
        _ = typeInLobby(&state, "jazz")
        _ = lobbyKeys(&state, .enter, .enter)
        _ = reduceLobby(&state, .directory(.reconnecting(attempt: 1), at: lobbyNow))
        #expect(state.form?.sent == nil)
        #expect(
            state.form?.problem
                == "The lobby's connection dropped before the server answered; once it is back, try again (if the "
                + "room was opened, you are given its link again).")
        // While the lobby reconnects, nothing is sent.
        _ = lobbyKeys(&state, .escape, .char("n"))
        #expect(state.form == nil)
        #expect(state.notice?.text == "The lobby is not connected; wait until it is, then try again.")
    }
}

/// Issue 27: the selected room shows who is inside before anyone walks in.
@Suite struct LobbyPreviewTests {
    static let rooms = [
        RoomListing(
            room: "lobby", topic: "Friday terminal hour",
            stage: [
                .init(name: "Ana", role: .host), .init(name: "Bo", role: .moderator),
                .init(name: "Chen", role: .speaker),
            ],
            onStage: 3, listeners: 1204, raisedHands: 3, startedAt: lobbyNow - 72 * 60_000,
            audience: ["Hana", "Ivo", "Jun", "Kai", "Lea"]),
        RoomListing(
            room: "jazz", topic: "Late night jazz", stage: [.init(name: "Fay", role: .host)], onStage: 1, listeners: 2,
            raisedHands: 0, startedAt: lobbyNow, audience: ["Gus", "Noa"]),
    ]

    @Test func theSelectedRoomNamesAFewListeners() {
        var state = openingLobby(rooms: Self.rooms)
        expectGolden("lobby-preview-80x24", renderLobby(state, height: 12))
        _ = lobbyKeys(&state, .down)
        let lines = renderLobby(state, height: 12).lines()
        #expect(lines.contains("     listening: Gus and Noa" + String(repeating: " ", count: 53)))
        #expect(!lines.contains { $0.contains("listening: Hana") })
    }

    @Test func theDialogDraws() {
        var state = openingLobby(rooms: Self.rooms)
        _ = lobbyKeys(&state, .char("n"))
        _ = typeInLobby(&state, "jazz")
        _ = lobbyKeys(&state, .enter)
        _ = typeInLobby(&state, "Late night")
        expectGolden("lobby-open-dialog-80x24", renderLobby(state, height: 14))
        for size in [(0, 0), (1, 1), (20, 5), (40, 12)] {
            _ = renderLobby(state, width: size.0, height: size.1)
        }
    }

    @Test func lineModeNamesTheListeners() {
        let state = openingLobby(lineMode: true, rooms: Self.rooms)
        var numbered: [String] = []
        let text = LobbyNarration.listing(state, renumber: &numbered)
        #expect(
            text.contains(
                "1. Friday terminal hour (lobby): 1,204 listening (Hana, Ivo, Jun, Kai, Lea and 1,199 more), 3 hands up;"
            ))
        #expect(text.contains("2. Late night jazz (jazz): 2 listening (Gus and Noa); on stage: Fay (host);"))
    }
}
