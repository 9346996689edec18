import RoomApp
import RoomCore
import TermUI
import Testing

/// Recording as people see it and ask for it: the header's REC mark, the sentences, the join line, the invitation,
/// `R`, `/record` and `/record stop`, and the recorder kept out of what people are shown.
@Suite struct RecordingScreenTests {
    /// The recorder, a participant of role `recorder`.
    let recorder = peer("rec", "Recorder", .recorder)
    /// A recording Ana started twelve minutes before `t0` (07:48 UTC: `t0` is 08:00 UTC).
    let recording = RecordingState(by: "ana", since: t0 - 12 * 60_000)

    func started(_ by: PeerID? = "ana", seq: UInt64 = 11) -> AppAction {
        .server(.recording(RecordingState(by: by, since: t0), by: nil, reason: nil), seq: seq, at: t0)
    }

    func stopped(by: PeerID? = nil, reason: String? = nil, seq: UInt64 = 12) -> AppAction {
        .server(.recording(nil, by: by, reason: reason), seq: seq, at: t0 + 1000)
    }

    func says(_ effects: [AppEffect]) -> [String] {
        effects.compactMap { if case .say(let text) = $0 { text } else { nil } }
    }

    /// A room joined as `me`, recorded or not, in line mode or on the screen.
    func room(
        as me: String, recorded: Bool = false, lineMode: Bool = false, ascii: Bool = false
    ) -> (AppState, [AppEffect]) {
        var state = AppState(roles: roles, ascii: ascii, lineMode: lineMode)
        _ = reduceApp(&state, .resize(width: 80, height: 24))
        let peers = sketchPeers() + (recorded ? [recorder] : [])
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "Friday terminal hour", selfID: PeerID(me), peers: peers, seq: 10,
            tokenRole: peers.first { $0.id == PeerID(me) }?.role, recording: recorded ? recording : nil)
        let effects = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
        return (state, effects)
    }

    @Test func theHeaderShowsRecForEveryoneUntilRecordingStops() {
        var (listener, _) = room(as: "hana")
        #expect(
            render(listener).lines()[0]
                == #" Clubroom · lobby — "Friday terminal hour"                ● connected · 10 here "#)
        send(&listener, started())
        #expect(
            render(listener).lines()[0]
                == #" ● REC Clubroom · lobby — "Friday terminal hour"          ● connected · 10 here "#)
        send(&listener, stopped(by: "ana"))
        #expect(!render(listener).lines()[0].contains("REC"))
        var (ascii, _) = room(as: "hana", recorded: true, ascii: true)
        #expect(
            render(ascii).lines()[0]
                == #" [REC] Clubroom | lobby - "Friday terminal hour"          o connected | 10 here "#)
        send(&ascii, stopped(reason: "the recorder could not write: No space left on device"))
        #expect(
            render(ascii).lines()[0]
                == #" Clubroom | lobby - "Friday terminal hour"                o connected | 10 here "#)
    }

    @Test func lineModeSaysWhoStartedAndStoppedAndWhy() {
        var (listener, _) = room(as: "hana", lineMode: true)
        #expect(says(send(&listener, started())[0]) == ["Ana started recording this room."])
        #expect(says(send(&listener, stopped(by: "bo"))[0]) == ["Bo stopped recording."])
        #expect(says(send(&listener, started("bo", seq: 13))[0]) == ["Bo started recording this room."])
        #expect(
            says(send(&listener, stopped(reason: "the recorder could not write: No space left on device", seq: 14))[0])
                == ["Recording stopped: the recorder could not write: No space left on device."])
        #expect(says(send(&listener, started(seq: 15))[0]) == ["Ana started recording this room."])
        #expect(says(send(&listener, stopped(seq: 16))[0]) == ["Recording stopped."])
        var (host, _) = room(as: "ana", lineMode: true)
        #expect(says(send(&host, started())[0]) == ["You started recording this room."])
        #expect(says(send(&host, stopped(by: "ana"))[0]) == ["You stopped recording."])
    }

    @Test func theScreenPutsTheSentencesOnTheNoticeRowAndInThePane() {
        var (listener, _) = room(as: "hana")
        send(&listener, started())
        #expect(listener.notice == Notice(.info, "Ana started recording this room."))
        #expect(
            render(listener).lines()[22]
                == " Ana started recording this room.".padding(toLength: 80, withPad: " ", startingAt: 0))
        send(&listener, stopped(by: "ana"))
        #expect(listener.notice == Notice(.info, "Ana stopped recording."))
        #expect(
            listener.log.suffix(2) == [
                .notice("Ana started recording this room.", isError: false),
                .notice("Ana stopped recording.", isError: false),
            ])
    }

    @Test func aNewcomersJoinLineSaysTheRoomIsRecordedAndLeavesTheRecorderOut() {
        let (_, effects) = room(as: "hana", recorded: true, lineMode: true)
        #expect(
            says(effects) == [
                "You joined lobby as Hana (listener). 10 people here: 4 on stage, 3 raised hands, 3 listening. "
                    + "Topic: \"Friday terminal hour\". This room is being recorded. Type /help for the commands."
            ])
        var (screen, _) = room(as: "hana", recorded: true)
        #expect(
            screen.notice
                == Notice(.info, "This room is being recorded, since 07:48 UTC (12 minutes), started by Ana."))
        #expect(render(screen).lines()[0].hasSuffix("● connected · 10 here "))
        #expect(screen.room.audience.map(\.name) == ["Hana", "Ivo", "Jun"])
        // The recorder cannot be selected: End goes to the last listener.
        send(&screen, key(.end))
        #expect(screen.selection == "jun")
    }

    @Test func theRecordersArrivalAndDepartureAreNotSaid() {
        var (listener, _) = room(as: "hana", lineMode: true)
        #expect(says(send(&listener, .server(.peerJoined(recorder), seq: 11, at: t0))[0]) == [])
        #expect(says(send(&listener, started("rec", seq: 12))[0]) == ["Recorder started recording this room."])
        #expect(says(send(&listener, .server(.peerLeft("rec"), seq: 13, at: t0))[0]) == [])
        #expect(listener.room.audience.count == 3)
        // Stopping removes the recorder, then says the recording stopped: one line, not two.
        send(&listener, .server(.peerJoined(recorder), seq: 14, at: t0), started("rec", seq: 15))
        let removed = send(
            &listener, .server(.removed("rec", reason: "the recording was stopped", by: "ana"), seq: 16, at: t0))[0]
        #expect(says(removed) == [])
        #expect(says(send(&listener, stopped(by: "ana", seq: 17))[0]) == ["Ana stopped recording."])
    }

    @Test func aServerThatRunsNoRecorderAnswersROnce() {
        var (host, _) = room(as: "ana")
        send(&host, char("R"))
        let answer =
            "this server does not run a recorder itself; run one with clubroom record and a recorder's link "
            + "(clubroom invite --role recorder)"
        let said = send(&host, .server(.error(code: "conflict", message: answer), seq: 0, at: t0))[0]
        let plain = "This" + answer.dropFirst(4) + "."
        #expect(said == [.say(plain)])
        #expect(host.notice == Notice(.error, plain))
        #expect(host.log.suffix(1) == [.notice(plain, isError: true)])
        #expect(!host.log.contains(.notice(answer, isError: true)))
    }

    @Test func whoSaysTheRoomIsRecordedAndSinceWhen() {
        var (listener, _) = room(as: "hana", recorded: true, lineMode: true)
        let who = says(send(&listener, .line("/who", at: t0))[0])
        #expect(who.count == 1)
        #expect(
            who.first?.hasPrefix(
                "Topic: \"Friday terminal hour\". This room is being recorded, since 07:48 UTC (12 minutes), "
                    + "started by Ana. On stage: ") == true, "\(who)")
        #expect(who.first?.hasSuffix("Listening (3): Hana, Ivo, Jun.") == true, "\(who)")
        var (unrecorded, _) = room(as: "hana", lineMode: true)
        #expect(says(send(&unrecorded, .line("/who", at: t0))[0]).first?.contains("recorded") == false)
    }

    @Test func anInvitationToSpeakInARecordedRoomSaysSoInBothModes() {
        var (plain, _) = room(as: "hana", recorded: true, lineMode: true)
        let invited = send(&plain, .server(.invited("hana", by: "ana", at: t0), seq: 11, at: t0))[0]
        #expect(
            says(invited).first
                == "Ana invited you to speak. This room is being recorded: what you say on stage is kept. "
                + "Type /accept or /decline; say something first to check your microphone.")
        var (screen, _) = room(as: "hana", recorded: true)
        send(&screen, .server(.invited("hana", by: "ana", at: t0), seq: 11, at: t0))
        let text = render(screen).lines().joined(separator: "\n")
        #expect(text.contains("● REC This room is being recorded: what"), "\(text)")
        var (unrecorded, _) = room(as: "hana", lineMode: true)
        let plainInvite = send(&unrecorded, .server(.invited("hana", by: "ana", at: t0), seq: 11, at: t0))[0]
        #expect(
            says(plainInvite).first
                == "Ana invited you to speak. Type /accept or /decline; say something first to check your microphone.")
    }

    @Test func rStartsRecordingAndAsksBeforeStoppingIt() {
        var (host, _) = room(as: "ana")
        #expect(sent(send(&host, char("R"))[0]) == [.startRecording])
        #expect(host.overlay == nil)
        send(&host, started())
        #expect(send(&host, char("R"))[0] == [])
        #expect(host.overlay == .confirm(.stopRecording, confirmSelected: false))
        let dialog = render(host).lines().joined(separator: "\n")
        #expect(dialog.contains("Stop recording?") && dialog.contains("[ Stop recording ]"), "\(dialog)")
        // Enter alone keeps recording: Cancel is chosen first.
        #expect(sent(send(&host, key(.enter))[0]) == [])
        #expect(host.overlay == nil)
        send(&host, char("R"))
        #expect(sent(send(&host, char("y"))[0]) == [.stopRecording])
        var (moderator, _) = room(as: "bo")
        #expect(sent(send(&moderator, char("R"))[0]) == [.startRecording])
    }

    @Test func theServersRecordingNoticeReachesTheHostAsItsSentenceOnTheScreenAndInLineMode() {
        let sentence = "The recorder keeps failing at once (it exited with status 1); the recording stopped."
        for lineMode in [false, true] {
            var (host, _) = room(as: "ana", lineMode: lineMode)
            let said = send(&host, .server(.error(code: "recording", message: sentence), seq: 0, at: t0))[0]
            #expect(said == [.say(sentence)])
            #expect(host.notice == Notice(.error, sentence))
        }
    }

    @Test func rAndRecordAreRefusedToThoseWithoutThePermission() {
        var (listener, _) = room(as: "hana")
        #expect(sent(send(&listener, char("R"))[0]) == [])
        #expect(listener.notice == Notice(.refusal, "Only hosts and moderators can start and stop recording."))
        var (speaker, _) = room(as: "chen", recorded: true, lineMode: true)
        #expect(
            send(&speaker, .line("/record stop", at: t0))[0] == [
                .say("Only hosts and moderators can start and stop recording.")
            ])
        #expect(speaker.overlay == nil)
    }

    @Test func recordAndRecordStopInLineModeAskAsTheScreenDoes() {
        var (host, _) = room(as: "ana", lineMode: true)
        func line(_ text: String) -> [AppEffect] { send(&host, .line(text, at: t0))[0] }
        #expect(line("/record stop") == [.say("The room is not being recorded.")])
        #expect(line("/record") == [.send(.startRecording)])
        send(&host, started())
        #expect(line("/record") == [.say("The room is already being recorded; /record stop stops it.")])
        let question =
            "Stop recording? What the room says from now on is not kept; what was recorded until now is. "
            + "Recording again starts a new file. Type yes to stop recording, or anything else to cancel."
        #expect(line("/RECORD Stop") == [.say(question)])
        #expect(line("no") == [.say("Cancelled. The recording goes on.")])
        #expect(line("/record stop") == [.say(question)])
        #expect(line("yes") == [.send(.stopRecording)])
        #expect(line("/record now") == [.say("/record does not take \"now\": /record [stop].")])
    }

    @Test func theScreensCommandLineRecordsToo() {
        var (host, _) = room(as: "ana")
        send(&host, char("/"))
        for c in "record" { send(&host, char(c)) }
        #expect(sent(send(&host, key(.enter))[0]) == [.startRecording])
        send(&host, started())
        send(&host, char(":"))
        for c in "record stop" { send(&host, char(c)) }
        #expect(sent(send(&host, key(.enter))[0]) == [])
        #expect(host.overlay == .confirm(.stopRecording, confirmSelected: false))
    }

    @Test func aReconnectSaysARecordingThatStartedMeanwhile() {
        var (listener, _) = room(as: "hana")
        send(&listener, .server(.reconnecting(attempt: 1), seq: 0, at: t0))
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "Friday terminal hour", selfID: "hana", peers: sketchPeers() + [recorder],
            seq: 20, tokenRole: .audience, recording: recording)
        send(&listener, .server(.reconnected, seq: 0, at: t0 + 2000))
        let back = send(&listener, .server(.joined(snapshot), seq: 20, at: t0 + 2000))[0]
        #expect(says(back) == ["Reconnected. While you were away: the room is being recorded now."])
        #expect(render(listener).lines()[0].hasPrefix(" ● REC "))
    }
}

/// The lobby shows which rooms are being recorded, before anyone walks in.
@Suite struct LobbyRecordingTests {
    func recorded(_ listing: RoomListing, _ on: Bool = true) -> RoomListing {
        var listing = listing
        listing.recording = on
        return listing
    }

    @Test func aRecordedRoomsRowStartsWithTheMarkInBothGlyphSets() {
        let rooms = [sampleRooms[0], recorded(sampleRooms[1]), sampleRooms[2]]
        let (state, _) = lobby(rooms: rooms)
        let lines = renderLobby(state).lines()
        #expect(lines[2].hasPrefix(" › Friday terminal hour "), "\(lines)")
        #expect(lines[4].hasPrefix("   ● REC Rust on Linux "), "\(lines)")
        #expect(lines[4].hasSuffix("87 listening · 3m "), "\(lines)")
        #expect(!lines[6].contains("REC"))
        let ascii = renderLobby(state, ascii: true).lines()
        #expect(ascii[4].hasPrefix("   [REC] Rust on Linux "), "\(ascii)")
        #expect(LobbyScreenMapper.model(state).entries.map(\.recording) == [false, true, false])
    }

    @Test func lineModeSaysARoomIsRecordedInTheListAndWhenThatChanges() {
        let rooms = [sampleRooms[0], recorded(sampleRooms[1]), sampleRooms[2]]
        var (state, effects) = lobby(lineMode: true, rooms: rooms)
        let said = effects.compactMap { if case .say(let text) = $0 { text } else { nil } }.joined(separator: "\n")
        #expect(
            said.contains("2. Rust on Linux (rust): being recorded; 87 listening; on stage: Eli (host); started "),
            "\(said)")
        #expect(said.contains("1. Friday terminal hour (lobby): 1,204 listening, 3 hands up;"), "\(said)")
        let stopped = reduceLobby(&state, .directory(.changed([.updated(sampleRooms[1])]), at: lobbyNow))
        #expect(stopped == [.say("Rust on Linux (rust) is no longer being recorded.")])
        let started = reduceLobby(&state, .directory(.changed([.updated(recorded(sampleRooms[2]))]), at: lobbyNow))
        #expect(started == [.say("quiet is being recorded now.")])
        #expect(
            state.happenings.suffix(2) == [
                "Rust on Linux (rust) is no longer being recorded.", "quiet is being recorded now.",
            ])
    }
}
