import RoomApp
import RoomCore
import Testing

/// The sentences events become, in the event pane and in line mode.
@Suite struct NarrationTests {
    func said(_ state: inout AppState, _ event: ServerEvent, seq: UInt64) -> [String] {
        send(&state, .server(event, seq: seq, at: t0))[0].compactMap { if case .say(let s) = $0 { s } else { nil } }
    }

    @Test func roomEventsBecomeSentences() {
        var state = joined(as: "hana")
        #expect(said(&state, .handRaised("ivo", at: t0), seq: 11) == ["Ivo raised their hand."])
        #expect(
            said(&state, .roleChanged("eli", to: .speaker, by: "bo"), seq: 12) == [
                "Bo brought Eli on stage as speaker."
            ])
        #expect(said(&state, .roleChanged("eli", to: .moderator, by: "ana"), seq: 13) == ["Ana made Eli a mod."])
        #expect(
            said(&state, .roleChanged("eli", to: .audience, by: "bo"), seq: 14) == ["Bo moved Eli to the audience."])
        #expect(
            said(&state, .roleChanged("fay", to: .speaker, by: ""), seq: 15) == ["Fay joined the stage as speaker."])
        #expect(said(&state, .muteChanged("chen", muted: true, by: "ana"), seq: 16) == ["Ana muted Chen."])
        #expect(said(&state, .removed("jun", reason: "spam", by: "ana"), seq: 17) == ["Ana removed Jun: spam."])
        #expect(
            said(&state, .topicChanged("Rust vs Swift", by: "bo"), seq: 18) == ["Bo set the topic: \"Rust vs Swift\"."])
        #expect(said(&state, .peerLeft("gus"), seq: 19) == ["Gus left."])
        #expect(said(&state, .speakers([SpeakerLevel(peer: "ana", level: 50)]), seq: 20) == [])
        #expect(state.log.last == .event("Gus left."))
    }

    /// `/bans` names who banned as the room knows them: by name, "you" for yourself, the operator as such, and
    /// only an identity the room does not know (one from a link is an opaque id) as it is.
    @Test func theBansNameWhoBannedAsTheRoomKnowsThem() {
        var state = joined(as: "hana")
        let bans = [
            RoomBan(identity: "zed", name: "Zed", by: "bo", at: t0, reason: "spam"),
            RoomBan(identity: "guest-1", name: "", by: "hana", at: t0, reason: ""),
            RoomBan(identity: "kim", name: "Kim", by: "operator", at: t0, reason: "old"),
            RoomBan(identity: "lu", name: "Lu", by: "guest-9", at: t0, reason: "flood"),
        ]
        #expect(
            said(&state, .bans(bans, lifted: []), seq: 11) == [
                "Banned from this server's rooms (/unban NAME lifts one): Zed (zed) by Bo: spam; guest-1 by you; "
                    + "Kim (kim) by the operator: old; Lu (lu) by guest-9: flood."
            ])
    }

    /// The server makes someone host only when the last host left: the sentence says so, to them and to others.
    @Test func aHandoverByTheServerSaysTheLastHostLeft() {
        var state = joined(as: "hana")
        _ = said(&state, .roleChanged("hana", to: .moderator, by: "ana"), seq: 11)
        _ = said(&state, .peerLeft("ana"), seq: 12)
        #expect(
            said(&state, .roleChanged("hana", to: .host, by: ""), seq: 13) == [
                "You are now the host: the last host left."
            ])
        var other = joined(as: "hana")
        _ = said(&other, .roleChanged("eli", to: .moderator, by: "ana"), seq: 11)
        #expect(
            said(&other, .roleChanged("eli", to: .host, by: ""), seq: 12) == [
                "Eli is now the host: the last host left."
            ])
    }

    /// A room left with neither host nor moderator says when it ends, and that it goes on when a host is back.
    @Test func aRoomEndingWithoutAHostIsSaidAndSoIsItsReprieve() {
        var state = joined(as: "hana")
        _ = said(&state, .peerLeft("ana"), seq: 11)
        #expect(
            said(&state, .roomEnding("ana", name: "Ana", at: t0 + 120_000), seq: 12) == [
                "Ana, the last host, left; the room ends in 2 minutes unless a host returns."
            ])
        #expect(state.room.endsAt == t0 + 120_000)
        // A grace shorter than two minutes is said to the second.
        var short = joined(as: "hana")
        _ = said(&short, .peerLeft("ana"), seq: 11)
        #expect(
            said(&short, .roomEnding("ana", name: "Ana", at: t0 + 90_000), seq: 12) == [
                "Ana, the last host, left; the room ends in 1 minute 30 seconds unless a host returns."
            ])
        _ = said(&state, .peerJoined(peer("ana", "Ana", .host, joined: 5)), seq: 13)
        #expect(
            said(&state, .roomEnding("ana", name: "Ana", at: nil), seq: 14) == [
                "Ana is back as host; the room goes on."
            ])
        #expect(state.room.endsAt == nil)
    }

    /// Someone who joins a room that is ending is told as those present were told: after the join line, the
    /// same sentence, on the notice row and in the event pane, and said in line mode.
    @Test func aNewcomerToARoomThatIsEndingIsToldWhenItEnds() {
        let peers = sketchPeers().filter { $0.role != .host && $0.role != .moderator }
        let ending = HostlessEnding(host: "ana", name: "Ana", at: t0 + 100_000)
        let sentence = "Ana, the last host, left; the room ends in 1 minute 40 seconds unless a host returns."
        for lineMode in [true, false] {
            var state = AppState(roles: roles, lineMode: lineMode)
            _ = reduceApp(&state, .resize(width: 80, height: 24))
            let snapshot = RoomSnapshot(
                roomID: "lobby", selfID: "hana", peers: peers, seq: 10, hostlessEnding: ending)
            let says = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0)).compactMap {
                if case .say(let text) = $0 { text } else { nil }
            }
            #expect(says.count == 2)
            #expect(says.first?.hasPrefix("You joined lobby as Hana (listener).") == true)
            #expect(says.last == sentence)
            #expect(state.notice == Notice(.info, sentence))
            #expect(state.log.last == .notice(sentence, isError: false))
            #expect(state.room.endsAt == t0 + 100_000)
        }
    }

    /// Someone who joins a room where raising hands is off is told so in the join line.
    @Test func aNewcomerToARoomWithHandsOffIsToldSo() {
        var state = AppState(roles: roles, lineMode: true)
        let snapshot = RoomSnapshot(
            roomID: "lobby", selfID: "hana",
            peers: sketchPeers().map {
                var p = $0; p.handRaisedAt = nil; return p
            },
            seq: 10, handsAllowed: false)
        let says = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0)).compactMap {
            if case .say(let text) = $0 { text } else { nil }
        }
        #expect(
            says == [
                "You joined lobby as Hana (listener). 10 people here: 4 on stage, 0 raised hands, 6 listening. "
                    + "Raising hands is turned off in this room. Type /help for the commands."
            ])
        #expect(!state.room.handsAllowed)
    }

    /// Back after a drop, the summary of what changed says the room began to end, and that raising hands went off.
    @Test func aReconnectSaysTheRoomBeganToEndMeanwhile() {
        var state = joined(as: "hana")
        _ = send(&state, .server(.reconnecting(attempt: 1, retryAt: t0 + 1_000), seq: 0, at: t0))
        let peers = sketchPeers().filter { $0.id != "ana" }.map {
            var p = $0; p.handRaisedAt = nil; return p
        }
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "Friday terminal hour", selfID: "hana", peers: peers, seq: 20,
            hostlessEnding: HostlessEnding(host: "ana", name: "Ana", at: t0 + 62_000), handsAllowed: false)
        let says = reduceApp(&state, .server(.joined(snapshot), seq: 20, at: t0 + 2_000)).compactMap {
            if case .say(let text) = $0 { text } else { nil }
        }
        #expect(
            says == [
                "Reconnected. While you were away: Ana is not back yet; raising hands is turned off; Ana, the last "
                    + "host, left; the room ends in 1 minute unless a host returns."
            ])
    }

    /// Raising hands turned off is said with what it did (the hands went down, in the client's state too), and
    /// turned on again; `/hands off` and `/hands on` ask the server for it.
    @Test func handsTurnedOffAndOnAreSaid() {
        var state = joined(as: "hana")
        #expect(
            said(&state, .handsAllowed(false, by: "bo"), seq: 11) == [
                "Bo turned raising hands off and lowered every raised hand."
            ])
        #expect(state.room.raisedHands.isEmpty)
        #expect(!state.room.handsAllowed)
        #expect(
            said(&state, .handsAllowed(true, by: "ana"), seq: 12) == [
                "Ana turned raising hands on: anyone may raise a hand again."
            ])
        #expect(state.room.handsAllowed)
        #expect(Command.parse("/hands off", peers: [Peer](), roles: roles) == .success(.handsAllowed(false)))
        #expect(Command.parse("/hands ON", peers: [Peer](), roles: roles) == .success(.handsAllowed(true)))
        guard case .failure = Command.parse("/hands maybe", peers: [Peer](), roles: roles) else {
            Issue.record("accepted /hands maybe")
            return
        }
    }

    @Test func whatHappensToYouIsSaidToYou() {
        var state = joined(as: "hana")
        #expect(
            said(&state, .handRaised("hana", at: t0), seq: 11) == ["You raised your hand. You are 4th in the queue."])
        #expect(
            said(&state, .roleChanged("hana", to: .speaker, by: ""), seq: 12)
                == ["You are on the stage now as speaker; you are muted, press m to talk."])
        #expect(said(&state, .askedToMute(by: "ana"), seq: 13) == [])
        #expect(said(&state, .roomEnded(reason: "thanks all"), seq: 14) == ["The room has ended: thanks all."])
    }

    /// Going live says whether anyone can hear you: with no microphone open (none could be opened), others hear
    /// silence, and the status line says "no mic" instead of the mute.
    @Test func goingLiveWithoutAMicrophoneSaysOthersHearSilence() {
        var state = joined(as: "hana")
        _ = said(&state, .roleChanged("hana", to: .speaker, by: ""), seq: 11)
        #expect(
            said(&state, .muteChanged("hana", muted: false, by: "hana"), seq: 12) == ["You are live: others hear you."])
        #expect(render(state).lines().last?.hasPrefix(" mic on · you: Hana") == true)

        _ = send(&state, .microphoneMissing(true))
        #expect(said(&state, .muteChanged("hana", muted: true, by: "hana"), seq: 13) == ["You are muted."])
        #expect(render(state).lines().last?.hasPrefix(" no mic · you: Hana") == true)
        #expect(
            said(&state, .muteChanged("hana", muted: false, by: "hana"), seq: 14) == [
                "You are live, but no microphone is open: others hear silence."
            ])

        _ = send(&state, .microphoneMissing(false))
        #expect(render(state).lines().last?.hasPrefix(" mic on · you: Hana") == true)
        // A listener has no microphone to speak of.
        _ = send(&state, .microphoneMissing(true))
        _ = said(&state, .roleChanged("hana", to: .audience, by: "ana"), seq: 15)
        #expect(render(state).lines().last?.hasPrefix(" listening · you: Hana") == true)
    }

    @Test func lineModeNamesCommandsInsteadOfKeys() {
        var state = AppState(roles: roles, lineMode: true)
        _ = reduceApp(
            &state,
            .server(
                .joined(RoomSnapshot(roomID: "lobby", selfID: "hana", peers: sketchPeers(), seq: 10)), seq: 10, at: t0))
        _ = reduceApp(&state, .server(.roleChanged("hana", to: .speaker, by: ""), seq: 11, at: t0))
        #expect(state.log.last == .event("You are on the stage now as speaker; you are muted, type /unmute to talk."))
    }

    @Test func whoListsTheStage() {
        var state = joined(as: "hana")
        #expect(
            send(&state, .line("/who", at: t0))[0]
                == [
                    .say(
                        "Topic: \"Friday terminal hour\". On stage: Ana (host, live), Bo (mod, muted), "
                            + "Chen (speaker, live), Dara (speaker, live). "
                            + "3 raised hands. Listening (3): Hana, Ivo, Jun.")
                ])
    }
}
