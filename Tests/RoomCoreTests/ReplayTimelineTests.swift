import Testing

@testable import RoomCore

/// The record of a short room, written to the recording contract by hand: Ana hosts with Bea listening, Ana
/// talks, makes Bea a speaker, changes the topic; Bea chats and talks; Cy comes and goes.
let replayRecordText = """
    {"version":1,"room":"jazz","topic":"New topic","started":"2026-12-06T05:00:00Z","started_ms":1796000000000,
     "duration_ms":12000,"complete":true,
     "people":[{"peer":"p1","identity":"ana@example","name":"Ana","role":"host"},
               {"peer":"p2","identity":"bea@example","name":"Bea","role":"audience"},
               {"peer":"p3","identity":"cy@example","name":"Cy","role":"audience"},
               {"peer":"r1","identity":"recorder","name":"Recorder","role":"recorder"}],
     "events":[
      {"at_ms":0,"kind":"stage","peer":"p1","role":"host"},
      {"at_ms":1200,"kind":"talk","peer":"p1","end_ms":3400},
      {"at_ms":5000,"kind":"role","peer":"p2","role":"speaker","by":"p1"},
      {"at_ms":6000,"kind":"topic","topic":"New topic","by":"p1"},
      {"at_ms":7000,"kind":"chat","peer":"p2","name":"Bea","text":"hi"},
      {"at_ms":8000,"kind":"join","peer":"p3","name":"Cy","role":"audience"},
      {"at_ms":8500,"kind":"talk","peer":"p2","end_ms":10500},
      {"at_ms":9000,"kind":"leave","peer":"p3"},
      {"at_ms":9500,"kind":"wave","peer":"p1"}],
     "speakers":[{"identity":"ana@example","name":"Ana","seconds":2.2,"turns":1},
                 {"identity":"bea@example","name":"Bea","seconds":2.0,"turns":1}]}
    """

@Suite struct ReplayTimelineTests {
    let timeline = ReplayTimeline(record: try! RecordingRecord.parse(Array(replayRecordText.utf8)), roles: roles)

    @Test func theRecordIsReadAsWritten() throws {
        let record = timeline.record
        #expect(record.room == "jazz")
        #expect(record.topic == "New topic")
        #expect(record.started == "2026-12-06T05:00:00Z")
        #expect(record.durationMilliseconds == 12_000)
        #expect(record.complete)
        #expect(record.people.map(\.name) == ["Ana", "Bea", "Cy", "Recorder"])
        // The unknown kind ("wave") is passed over.
        #expect(
            record.events == [
                .init(at: 0, .stage("p1", "host")), .init(at: 1200, .talk("p1", end: 3400)),
                .init(at: 5000, .role("p2", "speaker", by: "p1")), .init(at: 6000, .topic("New topic", by: "p1")),
                .init(at: 7000, .chat("p2", name: "Bea", text: "hi")),
                .init(at: 8000, .join("p3", name: "Cy", role: "audience")), .init(at: 8500, .talk("p2", end: 10_500)),
                .init(at: 9000, .leave("p3")),
            ])
    }

    @Test func theRoomAsItBegan() {
        #expect(
            timeline.moment(at: 0)
                == ReplayTimeline.Moment(
                    topic: "",
                    people: [
                        .init(peer: "p1", name: "Ana", role: "host"), .init(peer: "p2", name: "Bea", role: "audience"),
                        .init(peer: "r1", name: "Recorder", role: "recorder"),
                    ]))
    }

    /// The record's topic is the last one: before the first change the room's topic is not known; a record with
    /// no change has its topic throughout.
    @Test func theTopicOfTheMoment() throws {
        #expect(timeline.moment(at: 5999).topic == "")
        #expect(timeline.moment(at: 6000).topic == "New topic")
        let unchanged = try RecordingRecord.parse(
            Array(
                """
                {"version":1,"room":"r","topic":"Late sets","duration_ms":5000,"complete":true,"people":[],
                 "events":[{"at_ms":1000,"kind":"leave","peer":"a"}]}
                """.utf8))
        let steady = ReplayTimeline(record: unchanged, roles: roles)
        #expect(steady.moment(at: 0).topic == "Late sets")
        #expect(steady.moment(at: 5000).topic == "Late sets")
    }

    /// The topic the room began with, as the recorder writes it (a topic event at 0), holds until the first
    /// change, and is the room as it began rather than a change told in the pane.
    @Test func theTopicTheRoomBeganWithHoldsUntilTheFirstChange() throws {
        let record = try RecordingRecord.parse(
            Array(
                """
                {"version":1,"room":"r","topic":"Encore","duration_ms":9000,"complete":true,"people":[],
                 "events":[{"at_ms":0,"kind":"topic","topic":"Late sets"},
                           {"at_ms":6000,"kind":"topic","topic":"Encore","by":"p1"}]}
                """.utf8))
        let begun = ReplayTimeline(record: record, roles: roles)
        #expect(begun.moment(at: 0).topic == "Late sets")
        #expect(begun.moment(at: 5999).topic == "Late sets")
        #expect(begun.moment(at: 5999).lines == [])
        #expect(begun.moment(at: 6000).topic == "Encore")
        #expect(begun.moment(at: 6000).lines == [.event("p1 set the topic: \"Encore\".")])
        #expect(begun.sentence(for: record.events[0]) == nil)
    }

    @Test func whoIsTalkingFollowsTheSpurts() {
        #expect(timeline.moment(at: 1199).talking == [])
        #expect(timeline.moment(at: 1200).talking == ["p1"])
        #expect(timeline.moment(at: 3399).talking == ["p1"])
        #expect(timeline.moment(at: 3400).talking == [])
        #expect(timeline.moment(at: 9000).talking == ["p2"])
        #expect(timeline.moment(at: 10_500).talking == [])
    }

    @Test func theRoomInTheMiddle() {
        #expect(
            timeline.moment(at: 8200)
                == ReplayTimeline.Moment(
                    topic: "New topic",
                    people: [
                        .init(peer: "p1", name: "Ana", role: "host"), .init(peer: "p2", name: "Bea", role: "speaker"),
                        .init(peer: "r1", name: "Recorder", role: "recorder"),
                        .init(peer: "p3", name: "Cy", role: "audience"),
                    ],
                    lines: [
                        .event("Ana made Bea a speaker."), .event("Ana set the topic: \"New topic\"."),
                        .chat(name: "Bea", text: "hi"), .event("Cy joined."),
                    ]))
        let after = timeline.moment(at: 9000)
        #expect(after.people.map(\.peer) == ["p1", "p2", "r1"])
        #expect(after.lines.last == .event("Cy left."))
    }

    /// A seek lands on the same room as playing up to the same place: each moment comes from the record alone.
    @Test func seekingGivesTheSameRoomAsPlaying() {
        var played: [ReplayTimeline.Moment] = []
        for offset in stride(from: Int64(0), through: 12_000, by: 100) { played.append(timeline.moment(at: offset)) }
        for offset in [Int64(11_000), 1_000, 8_200, 0, 5_000, 12_000, 3_300] {
            #expect(timeline.moment(at: offset) == played[Int(offset / 100)])
        }
    }

    @Test func eventsBetweenTwoPlacesAndTheirSentences() {
        let events = timeline.events(after: 5000, through: 8500)
        #expect(events.map(\.at) == [6000, 7000, 8000, 8500])
        #expect(
            events.compactMap(timeline.sentence(for:)) == [
                "Ana set the topic: \"New topic\".", "Bea said: hi", "Cy joined.", "Bea started talking.",
            ])
        #expect(timeline.sentence(for: timeline.record.events[0]) == nil)
        #expect(timeline.events(through: 1200).count == 2)
    }

    @Test func eventsWrittenOutOfOrderArePutInOrder() throws {
        let text = """
            {"version":1,"room":"r","duration_ms":5000,"complete":false,"people":[],
             "events":[{"at_ms":3000,"kind":"leave","peer":"a"},{"at_ms":1000,"kind":"talk","peer":"a","end_ms":2000},
                       {"at_ms":3000,"kind":"leave","peer":"b"}]}
            """
        let record = try RecordingRecord.parse(Array(text.utf8))
        #expect(
            record.events == [
                .init(at: 1000, .talk("a", end: 2000)), .init(at: 3000, .leave("a")), .init(at: 3000, .leave("b")),
            ])
        #expect(!record.complete)
        #expect(record.topic == "")
    }

    /// A record cut at any byte (a recorder killed while no atomic rename protected it) is refused cleanly.
    @Test func aRecordCutAtAnyByteIsRefused() {
        let bytes = Array(replayRecordText.utf8)
        var refused = 0
        for end in 0..<bytes.count where (try? RecordingRecord.parse(bytes[0..<end])) == nil { refused += 1 }
        #expect(refused == bytes.count)
        #expect((try? RecordingRecord.parse(bytes)) == timeline.record)
    }

    /// Speaking times are read when a record has them, each within its limits; a record may leave them out.
    @Test func theSpeakingTimesAreReadWithinTheirLimits() throws {
        func speakers(_ list: String) throws -> [RecordingRecord.Speaker] {
            try RecordingRecord.parse(
                Array(
                    "{\"version\":1,\"room\":\"r\",\"duration_ms\":10,\"complete\":true,\"people\":[],\"events\":[],\"speakers\":\(list)}"
                        .utf8)
            ).speakers
        }
        #expect(
            try speakers("[{\"identity\":\"a\",\"name\":\"A\",\"seconds\":2,\"turns\":1}]")
                == [.init(identity: "a", name: "A", seconds: 2, turns: 1)])
        #expect(throws: RecordingRecordError.badField("speakers[0].seconds", "a number of seconds")) {
            _ = try speakers("[{\"identity\":\"a\",\"name\":\"A\",\"seconds\":1e300,\"turns\":1}]")
        }
        #expect(throws: RecordingRecordError.badField("speakers[0].turns", "a number of turns")) {
            _ = try speakers("[{\"identity\":\"a\",\"name\":\"A\",\"seconds\":1,\"turns\":-1}]")
        }
        #expect(throws: RecordingRecordError.badField("speakers", "a list")) { _ = try speakers("{}") }
    }

    @Test func aBadRecordSaysWhatIsWrong() {
        func problem(_ text: String) -> String? {
            do {
                _ = try RecordingRecord.parse(Array(text.utf8))
                return nil
            } catch {
                return error.description
            }
        }
        #expect(problem("{\"version\":1,") == "is not JSON (JSON ends too early at byte 13)")
        #expect(
            problem("{\"version\":2,\"room\":\"r\"}")
                == "is of version 2, which this clubroom does not know (it reads version 1)")
        #expect(problem("[]") == "is damaged: the record should be an object")
        #expect(
            problem(
                "{\"version\":1,\"room\":\"r\",\"duration_ms\":10,\"complete\":true,\"people\":[],\"events\":[{\"at_ms\":\"x\"}]}"
            )
                == "is damaged: events[0].at_ms should be a whole number")
        #expect(
            problem(
                "{\"version\":1,\"room\":\"r\",\"duration_ms\":10,\"complete\":true,\"people\":[{\"peer\":\"a\"}],\"events\":[]}"
            )
                == "is damaged: people[0].name should be a string")
        #expect(
            problem(
                "{\"version\":1,\"room\":\"r\",\"duration_ms\":10,\"complete\":true,\"people\":[],\"events\":[{\"at_ms\":5,\"kind\":\"talk\",\"peer\":\"a\",\"end_ms\":4}]}"
            ) == "is damaged: events[0].end_ms should be an offset not before at_ms")
        #expect(
            problem("{\"version\":1,\"room\":\"r\",\"duration_ms\":10,\"people\":[],\"events\":[]}")
                == "is damaged: complete should be true or false")
    }
}
