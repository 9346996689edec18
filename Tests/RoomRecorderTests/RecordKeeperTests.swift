import Foundation
import RoomCore
import RoomRecorder
import StrictJSON
import Testing

@Suite struct RecordKeeperTests {
    static let roles = try! RoleTable.parse(
        Data(
            """
            {"version":1,"roles":[
             {"name":"host","label":"host","rank":0,"onStage":true,"permissions":["publish_audio","chat"]},
             {"name":"speaker","label":"speaker","rank":2,"onStage":true,"permissions":["publish_audio","chat"]},
             {"name":"audience","label":"listener","rank":3,"onStage":false,"permissions":["chat"]}]}
            """.utf8), source: "test")

    static func keeper() -> RecordKeeper {
        RecordKeeper(
            room: "jazz", topic: "Late sets", startedMilliseconds: 1_796_000_000_000, selfID: "rec", roles: roles,
            peers: [
                Peer(id: "ana", name: "Ana", role: "host", joinedAt: 1),
                Peer(id: "bea", name: "Bea", role: "audience", joinedAt: 2),
                Peer(id: "rec", name: "Recorder", role: "audience", joinedAt: 3),
            ])
    }

    @Test func theRecordSaysWhoWasThereWhoSpokeWhenAndWhatChanged() {
        var keeper = Self.keeper()
        keeper.talkStarted("ana", at: 1_200)
        keeper.talkEnded("ana", at: 3_400)
        keeper.apply(.roleChanged("bea", to: "speaker", by: "ana"), at: 5_000)
        keeper.apply(.topicChanged("New topic", by: "ana"), at: 6_000)
        keeper.apply(.chat(ChatMessage(from: "bea", fromName: "Bea", text: "hi", sentAt: 0)), at: 7_000)
        keeper.apply(
            .chat(ChatMessage(from: "bea", fromName: "Bea", text: "psst", to: .peer("ana"), sentAt: 0)), at: 7_100)
        keeper.apply(.peerJoined(Peer(id: "cy", name: "Cy", role: "audience")), at: 8_000)
        keeper.talkStarted("bea", at: 8_500)
        keeper.apply(.peerLeft("cy"), at: 9_000)
        let record = keeper.record(duration: 10_000, complete: false)
        #expect(record.room == "jazz")
        #expect(record.topic == "New topic")
        #expect(
            record.people == [
                .init(peer: "ana", identity: "ana", name: "Ana", role: "host"),
                .init(peer: "bea", identity: "bea", name: "Bea", role: "audience"),
                .init(peer: "cy", identity: "cy", name: "Cy", role: "audience"),
            ])
        #expect(
            record.events == [
                .init(at: 0, .stage("ana", "host")),
                .init(at: 0, .topic("Late sets", by: nil)),
                .init(at: 1_200, .talk("ana", end: 3_400)),
                .init(at: 5_000, .role("bea", "speaker", by: "ana")),
                .init(at: 6_000, .topic("New topic", by: "ana")),
                .init(at: 7_000, .chat("bea", name: "Bea", text: "hi")),
                .init(at: 8_000, .join("cy", name: "Cy", role: "audience")),
                .init(at: 8_500, .talk("bea", end: 10_000)),
                .init(at: 9_000, .leave("cy")),
            ])
        #expect(
            record.speakers == [
                .init(identity: "ana", name: "Ana", seconds: 2.2, turns: 1),
                .init(identity: "bea", name: "Bea", seconds: 1.5, turns: 1),
            ])
    }

    @Test func aReconnectSnapshotBringsTheRecordUpToDate() {
        var keeper = Self.keeper()
        keeper.resync(
            peers: [
                Peer(id: "ana", name: "Ana", role: "host"), Peer(id: "dan", name: "Dan", role: "speaker"),
                Peer(id: "rec", name: "Recorder", role: "audience"),
            ], topic: "Late sets", at: 4_000)
        let record = keeper.record(duration: 5_000, complete: true)
        #expect(
            record.events == [
                .init(at: 0, .stage("ana", "host")),
                .init(at: 0, .topic("Late sets", by: nil)),
                .init(at: 4_000, .leave("bea")),
                .init(at: 4_000, .join("dan", name: "Dan", role: "speaker")),
            ])
        #expect(record.complete)
    }

    @Test func theRecordIsWrittenAsTheFormatSaysAndReadBack() throws {
        var keeper = Self.keeper()
        keeper.talkStarted("ana", at: 1_200)
        keeper.talkEnded("ana", at: 3_400)
        let record = keeper.record(duration: 61_240, complete: true)
        let text = record.json.encodedString
        #expect(
            text
                == #"{"version":1,"room":"jazz","topic":"Late sets","started":"2026-11-30T00:53:20Z","#
                + #""started_ms":1796000000000,"duration_ms":61240,"complete":true,"#
                + #""people":[{"peer":"ana","identity":"ana","name":"Ana","role":"host"},"#
                + #"{"peer":"bea","identity":"bea","name":"Bea","role":"audience"}],"#
                + #""events":[{"at_ms":0,"kind":"stage","peer":"ana","role":"host"},"#
                + #"{"at_ms":0,"kind":"topic","topic":"Late sets"},"#
                + #"{"at_ms":1200,"kind":"talk","peer":"ana","end_ms":3400}],"#
                + #""speakers":[{"identity":"ana","name":"Ana","seconds":2.2,"turns":1}]}"#)
        #expect(try RecordingRecord.parse(Array(text.utf8)) == record)
    }

    @Test func aRecordOfAnotherVersionOrCutShortIsRefusedInWords() {
        #expect(throws: RecordingRecordError.unknownVersion(2)) {
            _ = try RecordingRecord.parse(Array(#"{"version":2}"#.utf8))
        }
        #expect(throws: RecordingRecordError.self) {
            _ = try RecordingRecord.parse(Array(#"{"version":1,"room":"ja"#.utf8))
        }
    }

    /// A room without a topic has no topic event at 0; the record's topic is empty until one is set.
    @Test func aRoomWithoutATopicBeginsWithNoTopicEvent() {
        var keeper = RecordKeeper(
            room: "jazz", topic: "", startedMilliseconds: 0, selfID: "rec", roles: Self.roles,
            peers: [Peer(id: "ana", name: "Ana", role: "host", joinedAt: 1)])
        keeper.apply(.topicChanged("Encore", by: "ana"), at: 2_000)
        let record = keeper.record(duration: 3_000, complete: true)
        #expect(
            record.events == [.init(at: 0, .stage("ana", "host")), .init(at: 2_000, .topic("Encore", by: "ana"))])
        #expect(record.topic == "Encore")
    }

    @Test func theRecordGoesBesideTheAudio() {
        #expect(RecordingRecord.path(forAudio: "/data/recordings/jazz.opus") == "/data/recordings/jazz.json")
        #expect(RecordingRecord.path(forAudio: "room.ogg") == "room.ogg.json")
    }
}
