import RoomApp
import RoomCore
import TermUI
import Testing

/// Local volumes: `+`/`-` on the selected speaker, `/volume`, and what the stage shows.
@Suite struct VolumeTests {
    func type(_ state: inout AppState, _ text: String) -> [AppEffect] {
        send(&state, char("/"))
        for c in text { send(&state, char(c)) }
        return send(&state, key(.enter))[0]
    }

    @Test func plusAndMinusStepTheSelectedSpeakerByTen() {
        var state = joined(as: "bo")
        #expect(state.selection == "ana")
        #expect(
            send(&state, char("-"))[0] == [
                .sound(.setVolume("ana", percent: 90)), .say("Ana now sounds at 90 % to you."),
            ])
        #expect(state.volumes == ["ana": 90])
        #expect(state.notice == Notice(.info, "Ana now sounds at 90 % to you."))
        #expect(
            send(&state, char("+"))[0] == [
                .sound(.setVolume("ana", percent: 100)), .say("Ana now sounds at 100 % to you."),
            ])
        #expect(state.volumes == [:])
        #expect(send(&state, char("="))[0].first == .sound(.setVolume("ana", percent: 110)))
        #expect(state.volumes == ["ana": 110])
    }

    @Test func stepsLandOnMultiplesOfTenAndStopAtTheEnds() {
        var state = joined(as: "bo")
        send(&state, .volumes(["ana": 75]))
        #expect(send(&state, char("+"))[0].first == .sound(.setVolume("ana", percent: 80)))
        send(&state, .volumes(["ana": 75]))
        #expect(send(&state, char("-"))[0].first == .sound(.setVolume("ana", percent: 70)))
        send(&state, .volumes(["ana": 200]))
        #expect(send(&state, char("+"))[0] == [.say("Ana is already as loud as it goes for you (200 %).")])
        send(&state, .volumes(["ana": 5]))
        #expect(send(&state, char("-"))[0].first == .sound(.setVolume("ana", percent: 0)))
        #expect(send(&state, char("-"))[0] == [.say("Ana is already silent for you (0 %).")])
        #expect(state.volumes == ["ana": 0])
    }

    @Test func theKeysAreForOthersOnTheStage() {
        var state = joined(as: "bo")
        send(&state, char("l"))
        #expect(state.selection == "bo")
        #expect(
            send(&state, char("+"))[0] == [.say("You do not hear yourself; + and - turn others up or down for you.")])
        send(&state, key(.end))
        #expect(state.selection == "jun")
        #expect(
            send(&state, char("-"))[0] == [
                .say("Jun is not on the stage; to set their volume for later, type /volume Jun PERCENT.")
            ])
        #expect(state.volumes == [:])
    }

    @Test func anyoneMaySetTheirOwnVolumesWithNoPermission() {
        var state = joined(as: "hana")
        #expect(state.selection == "ana")
        #expect(send(&state, char("-"))[0].first == .sound(.setVolume("ana", percent: 90)))
        #expect(sent(type(&state, "volume chen 40")) == [])
        #expect(state.volumes == ["ana": 90, "chen": 40])
    }

    @Test func theVolumeCommandSetsOrSays() {
        var state = joined(as: "bo")
        #expect(
            type(&state, "volume ch 40") == [
                .sound(.setVolume("chen", percent: 40)), .say("Chen now sounds at 40 % to you."),
            ])
        #expect(type(&state, "/volume CHEN") == [.say("Chen sounds at 40 % to you.")])
        #expect(type(&state, "/volume dara") == [.say("Dara sounds at 100 % to you.")])
        #expect(
            type(&state, "/volume jun 150%") == [
                .sound(.setVolume("jun", percent: 150)), .say("Jun now sounds at 150 % to you."),
            ])
        #expect(
            type(&state, "/volume bo 50") == [
                .say("You do not hear yourself; /volume sets how loud others sound to you.")
            ])
        #expect(
            type(&state, "/volume chen 300") == [
                .say("\"300\" is not a volume; give a whole percent from 0 to 200: /volume NAME [PERCENT].")
            ])
        #expect(state.volumes == ["chen": 40, "jun": 150])
        var plain = joined(as: "hana")
        #expect(
            send(&plain, .line("/volume dara 0", at: t0))[0] == [
                .sound(.setVolume("dara", percent: 0)), .say("Dara now sounds at 0 % to you (silent)."),
            ])
    }

    @Test func keptVolumesArriveBeforeTheRoomAndShowOnTheStage() {
        var state = AppState(roles: roles)
        send(&state, .volumes(["ana": 70, "chen": 100, "dara": 250, "zed": 30]))
        #expect(state.volumes == ["ana": 70, "dara": 200, "zed": 30])
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "", selfID: "bo", peers: sketchPeers(), seq: 10)
        send(&state, .roles(roles), .server(.joined(snapshot), seq: 10, at: t0))
        let stage = RoomScreenMapper.model(state).stage
        #expect(stage.map(\.name) == ["Ana", "Bo", "Chen", "Dara"])
        #expect(stage.map(\.volume) == [70, nil, nil, 200])
        #expect(
            Narration.who(state)
                == "On stage: Ana (host, live, 70 % for you), Bo (mod, muted, you), Chen (speaker, live), "
                + "Dara (speaker, live, 200 % for you). Raised hands, in order: 1. Eli (4m12s), 2. Fay (1m03s), "
                + "3. Gus (0m09s). Listening (3): Hana, Ivo, Jun.")
    }
}
