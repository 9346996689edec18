import RoomApp
import RoomCore
import Testing

@testable import TermUI

/// A short recorded room: Ana hosts, talks, makes Bea a speaker and sets a topic; Bea chats and talks.
private let record = try! RecordingRecord.parse(
    Array(
        """
        {"version":1,"room":"jazz","topic":"Encore","started":"2026-12-06T05:00:00Z","duration_ms":30000,
         "complete":true,
         "people":[{"peer":"p1","name":"Ana","role":"host"},{"peer":"p2","name":"Bea","role":"audience"},
                   {"peer":"r1","name":"Recorder","role":"recorder"}],
         "events":[{"at_ms":0,"kind":"stage","peer":"p1","role":"host"},
                   {"at_ms":0,"kind":"talk","peer":"p1","end_ms":800},
                   {"at_ms":12000,"kind":"talk","peer":"p1","end_ms":14000},
                   {"at_ms":15000,"kind":"chat","peer":"p2","name":"Bea","text":"hi"},
                   {"at_ms":20000,"kind":"role","peer":"p2","role":"speaker","by":"p1"},
                   {"at_ms":21000,"kind":"topic","topic":"Encore","by":"p1"},
                   {"at_ms":22000,"kind":"talk","peer":"p2","end_ms":25000}]}
        """.utf8))

private func replay(length: Int64 = 30_000) -> ReplayState {
    ReplayState(timeline: ReplayTimeline(record: record, roles: roles), title: "jazz", length: length)
}

@Suite struct ReplayTests {
    @Test func aRecordClaimingAnAbsurdDurationReplaysWithoutOverflow() throws {
        let absurd = try RecordingRecord.parse(
            Array(
                """
                {"version":1,"room":"jazz","topic":"","started":"","duration_ms":9223372036854775807,"complete":true,
                 "people":[{"peer":"p1","name":"Ana","role":"host"}],
                 "events":[{"at_ms":0,"kind":"stage","peer":"p1","role":"host"}]}
                """.utf8))
        #expect(absurd.durationMilliseconds == .max)
        let timeline = ReplayTimeline(record: absurd, roles: roles)
        var state = ReplayState(timeline: timeline, title: "jazz", length: timeline.duration)
        #expect(state.length == RecordingRecord.maxReplayMilliseconds)
        #expect(reduceReplay(&state, .key(.right)) == [.seek(10_000)])
        #expect(reduceReplay(&state, .position(.max)).isEmpty)
        #expect(state.position == RecordingRecord.maxReplayMilliseconds)
        #expect(reduceReplay(&state, .key(.right)) == [.seek(RecordingRecord.maxReplayMilliseconds)])
        #expect(reduceReplay(&state, .key(.left)) == [.seek(RecordingRecord.maxReplayMilliseconds - 10_000)])
        #expect(ReplayText.model(state).position == "527039:50 / 527040:00")
    }

    @Test func spacePausesAndResumes() {
        var state = replay()
        #expect(reduceReplay(&state, .key(.char(" "))) == [.pause])
        #expect(state.paused)
        #expect(reduceReplay(&state, .key(.char(" "))) == [.resume])
        #expect(!state.paused)
    }

    @Test func arrowsSeekTenSecondsWithinTheRecording() {
        var state = replay()
        _ = reduceReplay(&state, .position(4_500))
        #expect(reduceReplay(&state, .key(.left)) == [.seek(0)])
        #expect(state.position == 0)
        #expect(reduceReplay(&state, .key(.right)) == [.seek(10_000)])
        #expect(reduceReplay(&state, .key(.right)) == [.seek(20_000)])
        #expect(reduceReplay(&state, .key(.right)) == [.seek(30_000)])
        #expect(reduceReplay(&state, .key(.right)) == [.seek(30_000)])
        #expect(reduceReplay(&state, .key(.left)) == [.seek(20_000)])
        #expect(state.position == 20_000)
    }

    @Test func qQuitsAndSpaceAtTheEndPlaysAgain() {
        var state = replay()
        _ = reduceReplay(&state, .ended)
        #expect(state.ended && state.position == 30_000)
        #expect(reduceReplay(&state, .key(.char(" "))) == [.seek(0), .resume])
        #expect(!state.ended && state.position == 0)
        #expect(reduceReplay(&state, .key(.char("q"))) == [.quit])
        #expect(state.quitting)
        var other = replay()
        #expect(reduceReplay(&other, .key(.ctrlC)) == [.quit])
    }

    @Test func theScreenShowsTheRoomOfTheMoment() {
        var state = replay()
        _ = reduceReplay(&state, .position(12_500))
        var model = ReplayText.model(state)
        #expect(model.room.header.topic == "")
        #expect(model.room.stage == [.init(name: "Ana", role: .host, level: 70, speaking: true)])
        #expect(model.room.audience == ["Bea"])
        #expect(model.position == "00:12 / 00:30")
        _ = reduceReplay(&state, .position(23_000))
        model = ReplayText.model(state)
        #expect(model.room.header.topic == "Encore")
        #expect(
            model.room.stage == [
                .init(name: "Ana", role: .host), .init(name: "Bea", role: .speaker, level: 70, speaking: true),
            ])
        #expect(model.room.audience == [])
        #expect(
            model.room.chat == [
                .message(from: "Bea", text: "hi", to: nil), .event("Ana made Bea a speaker."),
                .event("Ana set the topic: \"Encore\"."),
            ])
        var buffer = CellBuffer(width: 80, height: 24)
        ReplayScreen.render(model, into: &buffer, theme: Theme(level: .none, ascii: false))
        let lines = buffer.lines()
        #expect(lines[0].hasPrefix(" Replay · jazz — \"Encore\""))
        #expect(lines[0].hasSuffix("2 here "))
        #expect(lines[23].hasPrefix(" ▶ playing 00:23 / 00:30"))
        #expect(lines[23].hasSuffix("space pause  ← → 10 s  Tab chat  q quit  "))
        #expect(lines[2].contains("★ Ana (host)") && lines[2].contains("Bea"))
        _ = reduceReplay(&state, .key(.char(" ")))
        buffer = CellBuffer(width: 80, height: 24)
        ReplayScreen.render(ReplayText.model(state), into: &buffer, theme: Theme(level: .none, ascii: true))
        #expect(buffer.lines()[23].hasPrefix(" || paused 00:23 / 00:30"))
        #expect(buffer.lines()[23].hasSuffix("space play  <- -> 10 s  Tab chat  q quit  "))
    }

    @Test func theLineModeSaysWhatHappenedAtItsTime() {
        let state = replay()
        #expect(
            ReplayText.opening(state) == [
                "Replaying jazz (recorded 2026-12-06T05:00:00Z), 00:30 long.",
                "On the stage: Ana (host).", "1 listening.",
            ])
        #expect(
            ReplayText.lines(state, after: -1, through: 15_000) == [
                "[00:00] Ana started talking.", "[00:12] Ana started talking.", "[00:15] Bea said: hi",
            ])
        #expect(
            ReplayText.lines(state, after: 15_000, through: .max) == [
                "[00:20] Ana made Bea a speaker.", "[00:21] Ana set the topic: \"Encore\".",
                "[00:22] Bea started talking.",
            ])
        #expect(ReplayText.ending(state) == "[00:30] The recording ends.")
    }

    @Test func aTopicThatNeverChangedIsSaidAtTheStart() throws {
        let steady = try RecordingRecord.parse(
            Array(
                """
                {"version":1,"room":"jazz","topic":"Late sets","duration_ms":2000,"complete":true,
                 "people":[{"peer":"p1","name":"Ana","role":"host"}],"events":[]}
                """.utf8))
        let state = ReplayState(timeline: ReplayTimeline(record: steady, roles: roles), title: "jazz", length: 2_000)
        #expect(
            ReplayText.opening(state) == [
                "Replaying jazz, 00:02 long.", "Topic: \"Late sets\".", "On the stage: Ana (host).",
            ])
        #expect(ReplayText.model(state).room.header.topic == "Late sets")
    }

    @Test func withoutItsRecordTheReplayShowsTheFileAlone() {
        let state = ReplayState(
            timeline: nil, title: "tone", length: 3_000, notice: "There is no record beside the recording (tone.json).")
        #expect(ReplayText.opening(state) == ["Replaying tone, 00:03 long."])
        let model = ReplayText.model(state)
        #expect(model.room.stage == [] && model.room.header.peopleCount == 0)
        #expect(model.room.notice == RoomScreenModel.Notice("There is no record beside the recording (tone.json)."))
    }

    @Test func theClockCountsMinutesAndSeconds() {
        #expect(ReplayText.clock(0) == "00:00")
        #expect(ReplayText.clock(12_999) == "00:12")
        #expect(ReplayText.clock(61_000) == "01:01")
        #expect(ReplayText.clock(3_725_000) == "62:05")
    }
}
