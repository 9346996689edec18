import RoomApp
import RoomCore
import TermUI
import Testing

/// `/play`: checked on the client, played by the sound, told to the server once the file opened; the ♪ on stage
/// and the title and time on the player's status line.
@Suite struct PlayTests {
    func type(_ state: inout AppState, _ text: String) -> [AppEffect] {
        send(&state, char("/"))
        for c in text { send(&state, char(c)) }
        return send(&state, key(.enter))[0]
    }

    func says(_ effects: [AppEffect]) -> [String] {
        effects.compactMap { if case .say(let text) = $0 { text } else { nil } }
    }

    @Test func aSpeakerPlaysAFileThatOpenedAndStopsIt() {
        var state = joined(as: "chen")
        #expect(type(&state, "play /srv/jingles/intro one.wav") == [.sound(.play("/srv/jingles/intro one.wav"))])
        #expect(state.playing == nil)
        let started = send(&state, .filePlay(.started(PlayingFile(title: "intro one", position: 0, length: 75))))[0]
        #expect(sent(started) == [.setPlaying(true)])
        #expect(says(started) == ["Playing \u{201C}intro one\u{201D} (1:15) into the room; /play stop ends it."])
        send(&state, .filePlay(.progress(PlayingFile(title: "intro one", position: 12, length: 75))))
        #expect(says(type(&state, "play")) == ["Playing \u{201C}intro one\u{201D} 0:12 / 1:15."])
        let stopped = type(&state, "play stop")
        #expect(stopped.first == .sound(.stopPlaying))
        #expect(sent(stopped) == [.setPlaying(false)])
        #expect(says(stopped) == ["Stopped \u{201C}intro one\u{201D}."])
        #expect(state.playing == nil)
        #expect(says(type(&state, "play")) == ["Nothing is playing."])
        #expect(says(type(&state, "play stop")) == ["Nothing is playing."])
    }

    @Test func beingMutedStopsTheFile() {
        var state = joined(as: "chen")
        send(&state, .filePlay(.started(PlayingFile(title: "intro", position: 0, length: 30))))
        let muted = send(&state, .server(.muteChanged("chen", muted: true, by: "ana"), seq: 11, at: t0))[0]
        #expect(muted.contains(.sound(.stopPlaying)))
        #expect(sent(muted) == [.setPlaying(false)])
        #expect(says(muted).contains("Muted: \u{201C}intro\u{201D} stopped."))
        #expect(state.playing == nil)
    }

    @Test func aFileThatEndsTakesTheNoteDown() {
        var state = joined(as: "chen")
        send(&state, .filePlay(.started(PlayingFile(title: "jingle", position: 0, length: 3))))
        let ended = send(&state, .filePlay(.ended(title: "jingle")))[0]
        #expect(sent(ended) == [.setPlaying(false)])
        #expect(says(ended) == ["\u{201C}jingle\u{201D} has finished playing."])
        #expect(state.playing == nil)
    }

    @Test func listenersTheMutedAndUnplayableFilesAreRefusedInOneSentence() {
        var listener = joined(as: "hana")
        #expect(
            says(type(&listener, "play /tmp/a.wav")) == [
                "Only the stage can play a file into the room; raise your hand to be invited up."
            ])
        var muted = joined(as: "bo")
        #expect(
            says(type(&muted, "play /tmp/a.wav")) == [
                "Unmute first: a file plays in your own audio, which is off while muted."
            ])
        var speaker = joined(as: "chen")
        let refused = send(&speaker, .filePlay(.refused("/tmp/notes.txt is neither a WAV nor an Ogg Opus file.")))[0]
        #expect(says(refused) == ["/tmp/notes.txt is neither a WAV nor an Ogg Opus file."])
        #expect(sent(refused) == [])
        #expect(speaker.playing == nil)
    }

    @Test func theStageShowsTheNoteAndThePlayerSeesTitleAndTime() {
        var state = joined(as: "chen")
        send(&state, .server(.playingChanged("dara", playing: true), seq: 11, at: t0))
        send(&state, .filePlay(.started(PlayingFile(title: "intro", position: 0, length: 30))))
        send(&state, .filePlay(.progress(PlayingFile(title: "intro", position: 7, length: 30))))
        let screen = render(state).lines()
        #expect(screen.contains { $0.contains("♪Dara") }, "\(screen.joined(separator: "\n"))")
        // At 80 columns the status line keeps the title and cuts the time; a wider screen shows both.
        #expect(screen.last?.contains("speaker \u{00B7} ♪ \u{201C}intro\u{201D}") == true)
        var wide = joined(as: "chen", width: 120)
        send(&wide, .filePlay(.started(PlayingFile(title: "intro", position: 7, length: 30))))
        #expect(render(wide, width: 120).lines().last?.contains("♪ \u{201C}intro\u{201D} 0:07 / 0:30") == true)
        var ascii = joined(as: "ana", ascii: true)
        send(&ascii, .server(.playingChanged("dara", playing: true), seq: 11, at: t0))
        #expect(render(ascii).lines().contains { $0.contains("@Dara") })
    }

    @Test func otherPeoplesFilesAreSaidInLineMode() {
        var state = AppState(roles: roles, lineMode: true)
        _ = reduceApp(
            &state,
            .server(
                .joined(RoomSnapshot(roomID: "lobby", selfID: "hana", peers: sketchPeers(), seq: 10)), seq: 10, at: t0))
        _ = reduceApp(&state, .server(.playingChanged("dara", playing: true), seq: 11, at: t0))
        #expect(state.room.peers["dara"]?.playing == true)
        #expect(state.log.last == .event("Dara is playing a file into the room."))
        _ = reduceApp(&state, .server(.playingChanged("dara", playing: false), seq: 12, at: t0))
        #expect(state.log.last == .event("Dara stopped playing."))
    }
}
