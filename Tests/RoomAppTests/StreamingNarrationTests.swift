import RoomApp
import RoomCore
import TermUI
import Testing

/// Streaming as people see it and ask for it: the header's LIVE mark, the sentences, the join line, `/who`, the
/// invitation, `/stream`, the hosts' notices, and the lobby's mark.
@Suite struct StreamingNarrationTests {
    /// Streaming to radio since 07:48 UTC (`t0` is 08:00 UTC).
    let radio = StreamingState(to: ["radio"], since: t0 - 12 * 60_000)

    func streaming(_ to: [String], by: PeerID? = "ana", reason: String? = nil, seq: UInt64) -> AppAction {
        .server(
            .streaming(to.isEmpty ? nil : StreamingState(to: to, since: t0), by: by, reason: reason), seq: seq, at: t0)
    }

    func says(_ effects: [AppEffect]) -> [String] {
        effects.compactMap { if case .say(let text) = $0 { text } else { nil } }
    }

    func room(
        as me: String, streamed: Bool = false, recorded: Bool = false, lineMode: Bool = false, ascii: Bool = false,
        destinations: [String] = []
    ) -> (AppState, [AppEffect]) {
        var state = AppState(roles: roles, ascii: ascii, lineMode: lineMode)
        _ = reduceApp(&state, .resize(width: 80, height: 24))
        let peers = sketchPeers()
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "Friday terminal hour", selfID: PeerID(me), peers: peers, seq: 10,
            tokenRole: peers.first { $0.id == PeerID(me) }?.role,
            recording: recorded ? RecordingState(by: "ana", since: t0) : nil, streaming: streamed ? radio : nil,
            streamDestinations: destinations)
        let effects = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
        return (state, effects)
    }

    @Test func theHeaderShowsLiveForEveryoneBesideRec() {
        var (listener, _) = room(as: "hana")
        send(&listener, streaming(["radio"], seq: 11))
        #expect(
            render(listener).lines()[0]
                == #" ● LIVE Clubroom · lobby — "Friday terminal hour"         ● connected · 10 here "#)
        var (both, _) = room(as: "hana", streamed: true, recorded: true, ascii: true)
        #expect(render(both).lines()[0].hasPrefix(#" [REC] [LIVE] Clubroom | lobby - "Friday terminal hour""#))
        send(&both, streaming([], seq: 11))
        #expect(render(both).lines()[0].hasPrefix(" [REC] Clubroom | lobby"))
    }

    @Test func lineModeSaysWhoStartedAndStoppedWhichAndWhy() {
        var (listener, _) = room(as: "hana", lineMode: true)
        #expect(
            says(send(&listener, streaming(["radio"], seq: 11))[0]) == ["Ana started streaming this room to radio."])
        #expect(
            says(send(&listener, streaming(["radio", "hls", "tv"], seq: 12))[0])
                == ["Ana started streaming this room to hls and tv."])
        #expect(says(send(&listener, streaming(["hls", "tv"], seq: 13))[0]) == ["Ana stopped streaming to radio."])
        #expect(
            says(send(&listener, streaming(["tv"], by: nil, reason: "its recorder keeps failing at once.", seq: 14))[0])
                == ["Streaming to hls stopped: its recorder keeps failing at once."])
        #expect(says(send(&listener, streaming([], by: nil, seq: 15))[0]) == ["Streaming to tv stopped."])
        var (host, _) = room(as: "ana", lineMode: true)
        #expect(says(send(&host, streaming(["radio"], seq: 11))[0]) == ["You started streaming this room to radio."])
        #expect(says(send(&host, streaming([], seq: 12))[0]) == ["You stopped streaming to radio."])
    }

    @Test func theJoinLineWhoAndTheInvitationSayTheRoomIsStreamed() {
        let (_, effects) = room(as: "hana", streamed: true, lineMode: true)
        #expect(
            says(effects) == [
                "You joined lobby as Hana (listener). 10 people here: 4 on stage, 3 raised hands, 3 listening. "
                    + "Topic: \"Friday terminal hour\". This room is streamed live to radio, since 07:48 UTC. "
                    + "Type /help for the commands."
            ])
        var (listener, _) = room(as: "hana", streamed: true, lineMode: true)
        let who = says(send(&listener, .line("/who", at: t0))[0]).first ?? ""
        #expect(
            who.hasPrefix(
                "Topic: \"Friday terminal hour\". This room is streamed live to radio, since 07:48 UTC. On stage: "),
            "\(who)")
        let invited = send(&listener, .server(.invited("hana", by: "ana", at: t0), seq: 11, at: t0))[0]
        #expect(
            says(invited).first
                == "Ana invited you to speak. This room is streamed live: what you say on stage goes out. "
                + "Type /accept or /decline; say something first to check your microphone.")
        var (screen, _) = room(as: "hana", streamed: true)
        send(&screen, .server(.invited("hana", by: "ana", at: t0), seq: 11, at: t0))
        #expect(render(screen).lines().joined(separator: "\n").contains("● LIVE This room is streamed live"))
    }

    @Test func slashStreamListsStartsAndStops() {
        var (host, _) = room(as: "ana", lineMode: true, destinations: ["radio", "hls"])
        #expect(
            says(send(&host, .line("/stream", at: t0))[0])
                == ["This server's streams: radio, hls. /stream NAME starts one; /stream stop NAME stops it."])
        let started = send(&host, .line("/stream radio", at: t0))[0]
        #expect(started.contains { if case .send(.startStream("radio")) = $0 { true } else { false } }, "\(started)")
        send(&host, streaming(["radio"], seq: 11))
        #expect(
            says(send(&host, .line("/stream", at: t0))[0])
                == ["This server's streams: radio (live), hls. /stream NAME starts one; /stream stop NAME stops it."])
        #expect(
            says(send(&host, .line("/stream tv", at: t0))[0])
                == ["This server has no stream named tv; it has: radio, hls."])
        let stopped = send(&host, .line("/stream stop radio", at: t0))[0]
        #expect(stopped.contains { if case .send(.stopStream("radio")) = $0 { true } else { false } }, "\(stopped)")
        var (listener, _) = room(as: "hana", streamed: true, lineMode: true)
        #expect(says(send(&listener, .line("/stream", at: t0))[0]) == ["This room is streamed live to radio."])
        var (untold, _) = room(as: "hana", lineMode: true)
        #expect(
            says(send(&untold, .line("/stream", at: t0))[0])
                == ["The room streams nowhere. The server tells hosts its streams when they join."])
        #expect(
            says(send(&listener, .line("/stream radio", at: t0))[0])
                == ["Only hosts can start and stop streaming the room."])
    }

    @Test func aStreamsNoticeReachesTheHostAsItsSentence() {
        var (host, _) = room(as: "ana")
        let sentence = "Streaming to radio stopped: the server refused the password."
        let said = send(&host, .server(.error(code: "stream", message: sentence), seq: 0, at: t0))[0]
        #expect(said == [.say(sentence)])
        #expect(host.notice == Notice(.info, sentence))
    }

    @Test func theLobbyMarksAStreamedRoomInBothGlyphSetsAndLineMode() {
        var streamed = sampleRooms[1]
        streamed.streaming = ["radio"]
        let (state, _) = lobby(rooms: [sampleRooms[0], streamed, sampleRooms[2]])
        let lines = renderLobby(state).lines()
        #expect(lines[4].hasPrefix("   ● LIVE Rust on Linux "), "\(lines)")
        #expect(renderLobby(state, ascii: true).lines()[4].hasPrefix("   [LIVE] Rust on Linux "))
        #expect(LobbyScreenMapper.model(state).entries.map(\.streaming) == [false, true, false])
        var (plain, effects) = lobby(lineMode: true, rooms: [sampleRooms[0], streamed, sampleRooms[2]])
        let said = effects.compactMap { if case .say(let text) = $0 { text } else { nil } }.joined(separator: "\n")
        #expect(said.contains("2. Rust on Linux (rust): streamed live; 87 listening;"), "\(said)")
        let stopped = reduceLobby(&plain, .directory(.changed([.updated(sampleRooms[1])]), at: lobbyNow))
        #expect(stopped == [.say("Rust on Linux (rust) is no longer streamed live.")])
    }

    @Test func aReconnectSaysWhereTheRoomStreamsNow() {
        var (listener, _) = room(as: "hana")
        send(&listener, .server(.reconnecting(attempt: 1), seq: 0, at: t0))
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "Friday terminal hour", selfID: "hana", peers: sketchPeers(), seq: 20,
            tokenRole: .audience, streaming: StreamingState(to: ["radio", "hls"], since: t0))
        send(&listener, .server(.reconnected, seq: 0, at: t0 + 2000))
        let back = send(&listener, .server(.joined(snapshot), seq: 20, at: t0 + 2000))[0]
        #expect(says(back) == ["Reconnected. While you were away: the room is streamed live to radio and hls now."])
        send(&listener, .server(.reconnecting(attempt: 1), seq: 0, at: t0 + 3000))
        var ended = snapshot
        ended.streaming = nil
        ended.seq = 30
        send(&listener, .server(.reconnected, seq: 0, at: t0 + 4000))
        let again = send(&listener, .server(.joined(ended), seq: 30, at: t0 + 4000))[0]
        #expect(says(again) == ["Reconnected. While you were away: the room is no longer streamed live."])
    }
}
