import Foundation
import Testing

@testable import RoomCore

/// The room's recording as a client's state follows it, action by action.
@Suite struct RecordingEventTests {
    let started = RecordingState(by: "ana", since: 1_000)

    @Test func aRecordingThatStartsIsKept() {
        var state = joinedRoom(as: "dara")
        let before = state
        #expect(state.apply(.recording(started, by: nil, reason: nil), seq: 11) == [])
        #expect(
            state
                == before.with {
                    $0.recording = started; $0.lastSeq = 11
                })
    }

    @Test func theSameRecordingAgainChangesNothing() {
        var state = joinedRoom(as: "dara")
        state.apply(.recording(started, by: nil, reason: nil), seq: 11)
        let before = state
        state.apply(.recording(started, by: nil, reason: nil), seq: 12)
        #expect(
            state
                == before.with {
                    $0.lastSeq = 12; $0.ignoredEvents = IgnoredEvents([.noChange: 1])
                })
    }

    @Test func aRecordingThatStopsSaysWhoStoppedItAndWhy() {
        var state = joinedRoom(as: "dara")
        state.apply(.recording(started, by: nil, reason: nil), seq: 11)
        let before = state
        state.apply(.recording(nil, by: "bo", reason: "the recorder could not write:\u{1B}[2J disk full"), seq: 12)
        #expect(
            state
                == before.with {
                    $0.recording = nil
                    $0.recordingStopped = RecordingStop(by: "bo", reason: "the recorder could not write:[2J disk full")
                    $0.lastSeq = 12
                })
    }

    @Test func aStopWithAnEmptyReasonHasNone() {
        var state = joinedRoom(as: "dara")
        state.apply(.recording(started, by: nil, reason: nil), seq: 11)
        state.apply(.recording(nil, by: nil, reason: " "), seq: 12)
        #expect(state.recording == nil)
        #expect(state.recordingStopped == RecordingStop(by: nil, reason: nil))
    }

    @Test func aStopWhileNotRecordedChangesNothing() {
        var state = joinedRoom(as: "dara")
        let before = state
        state.apply(.recording(nil, by: "ana", reason: nil), seq: 11)
        #expect(
            state
                == before.with {
                    $0.lastSeq = 11; $0.ignoredEvents = IgnoredEvents([.noChange: 1])
                })
    }

    @Test func aNewRecordingForgetsHowTheLastOneStopped() {
        var state = joinedRoom(as: "dara")
        state.apply(.recording(started, by: nil, reason: nil), seq: 11)
        state.apply(.recording(nil, by: "ana", reason: nil), seq: 12)
        let again = RecordingState(by: "bo", since: 5_000)
        state.apply(.recording(again, by: nil, reason: nil), seq: 13)
        #expect(state.recording == again)
        #expect(state.recordingStopped == nil)
    }

    @Test func theSnapshotSaysWhetherTheRoomIsRecorded() {
        var state = RoomState(roles: roles)
        let snapshot = RoomSnapshot(roomID: "lobby", selfID: "dara", peers: roomPeers, seq: 10, recording: started)
        state.apply(.joined(snapshot), seq: 10)
        #expect(state.recording == started)
        let fresh = RoomSnapshot(roomID: "lobby", selfID: "dara", peers: roomPeers, seq: 20)
        state.apply(.joined(fresh), seq: 20)
        #expect(state.recording == nil)
    }

    @Test func theEndOfTheRoomEndsItsRecording() {
        var state = joinedRoom(as: "dara")
        state.apply(.recording(started, by: nil, reason: nil), seq: 11)
        state.apply(.roomEnded(reason: "done"), seq: 12)
        #expect(state.recording == nil)
    }

    @Test func aRecordingBeforeTheSnapshotIsIgnored() {
        var state = RoomState(roles: roles)
        state.apply(.recording(started, by: nil, reason: nil), seq: 3)
        #expect(state.recording == nil)
        #expect(state.ignoredEvents == IgnoredEvents([.beforeSnapshot: 1]))
    }
}

/// A recorder is in the room for everyone to know of, but in none of the screen's sections.
@Suite struct RecorderPeerTests {
    let recorder = peer("rec", "Recorder", .recorder, joinedAt: 9)

    @Test func aRecorderWhoJoinsIsListedNowhere() {
        var state = joinedRoom(as: "dara")
        state.apply(.peerJoined(recorder), seq: 11)
        #expect(state.peers["rec"] == recorder)
        #expect(state.audience.map(\.id) == ["dara"])
        #expect(state.stage.map(\.id) == ["ana", "bo", "chen"])
        #expect(state.raisedHands.map(\.id) == ["eli"])
        #expect(state.section(of: "rec") == nil)
        state.apply(.peerLeft("rec"), seq: 12)
        #expect(state.peers["rec"] == nil)
        #expect(state.audience.map(\.id) == ["dara"])
    }

    @Test func aRecorderInTheSnapshotIsListedNowhere() {
        let state = joinedRoom(as: "dara", peers: roomPeers + [recorder])
        #expect(state.audience.map(\.id) == ["dara"])
        #expect(state.section(of: "rec") == nil)
    }

    @Test func aRecorderAsksForNothingButToLeave() {
        var state = joinedRoom(as: "rec", peers: roomPeers + [recorder])
        #expect(reduce(&state, .request(.raiseHand)) == [.notice(Notice(.refusal, ClientRequest.recorderOnlyListens))])
        #expect(
            reduce(&state, .request(.chat("hi", to: .everyone)))
                == [.notice(Notice(.refusal, ClientRequest.recorderOnlyListens))])
        #expect(reduce(&state, .request(.recorderError("full"))) == [.send(.recorderError("full"))])
        #expect(reduce(&state, .request(.leave)) == [.send(.leave), .leave])
    }

    @Test func nobodyActsOnARecorderButToRemoveIt() {
        var state = joinedRoom(as: "ana", peers: roomPeers + [recorder])
        let refused = [Effect.notice(Notice(.refusal, "Recorder is a recorder: it only listens"))]
        #expect(reduce(&state, .request(.invite("rec"))) == refused)
        #expect(reduce(&state, .request(.setRole("rec", .speaker))) == refused)
        #expect(reduce(&state, .request(.mutePeer("rec"))) == refused)
        #expect(reduce(&state, .request(.chat("hi", to: .peer("rec")))) == refused)
        #expect(
            reduce(&state, .request(.remove("rec", reason: nil)))
                == [.send(.remove("rec", reason: nil))])
        #expect(
            reduce(&state, .request(.setRole("dara", .recorder)))
                == [.notice(Notice(.refusal, ClientRequest.recorderByLinkOnly))])
    }
}

/// Who may start and stop a recording, and what the client says before asking.
@Suite struct RecordingRequestTests {
    @Test func hostsAndModeratorsMayRecord() {
        #expect(roles.can(.host, .record))
        #expect(roles.can(.moderator, .record))
        #expect(!roles.can(.speaker, .record))
        #expect(!roles.can(.audience, .record))
        #expect(!roles.can(.recorder, .record))
        #expect(roles.definition(of: .recorder)?.permissions == [])
        #expect(!roles.isOnStage(.recorder))
    }

    @Test func aListenerIsToldWhoMayRecord() {
        var state = joinedRoom(as: "dara")
        let refused = [Effect.notice(Notice(.refusal, "only hosts and moderators can start and stop recording"))]
        #expect(reduce(&state, .request(.startRecording)) == refused)
        #expect(reduce(&state, .request(.stopRecording)) == refused)
    }

    @Test func aHostStartsWhenNotRecordedAndStopsWhenRecorded() {
        var state = joinedRoom(as: "ana")
        #expect(reduce(&state, .request(.startRecording)) == [.send(.startRecording)])
        #expect(
            reduce(&state, .request(.stopRecording)) == [.notice(Notice(.refusal, ClientRequest.notRecording))])
        state.apply(.recording(RecordingState(by: "ana", since: 1), by: nil, reason: nil), seq: 11)
        #expect(
            reduce(&state, .request(.startRecording)) == [.notice(Notice(.refusal, ClientRequest.alreadyRecording))])
        #expect(reduce(&state, .request(.stopRecording)) == [.send(.stopRecording)])
    }

    @Test func onlyARecorderReportsWhyItStops() {
        var state = joinedRoom(as: "ana")
        #expect(
            reduce(&state, .request(.recorderError("x")))
                == [.notice(Notice(.refusal, "only a recorder reports why it stops"))])
    }

    @Test func recorderLinksNeedTheRightToRecord() {
        let speaker = peer("chen", "Chen", .speaker)
        let host = peer("ana", "Ana", .host)
        #expect(roles.check(.createLink(role: .recorder, ttl: 3600), by: host, target: nil) == nil)
        var noRecord = roles.roles
        noRecord[1].permissions.remove(.record)
        let table = RoleTable(validated: noRecord)
        let moderator = peer("bo", "Bo", .moderator)
        #expect(
            table.check(.createLink(role: .recorder, ttl: 3600), by: moderator, target: nil)
                == Refusal("only hosts can make links for a recorder"))
        #expect(
            roles.check(.createLink(role: .recorder, ttl: 3600), by: speaker, target: nil)
                == Refusal("only hosts and moderators can make invite links"))
    }
}

/// The role table's recorder: given to a table without one, and held to listening.
@Suite struct RecorderRoleTableTests {
    func table(_ roles: String) -> String { #"{"version": 1, "roles": [\#(roles)]}"# }
    let host = #"{"name": "host", "rank": 0, "onStage": true, "permissions": ["end_room"]}"#
    let audience = #"{"name": "audience", "rank": 7, "onStage": false, "permissions": []}"#

    @Test func aTableWithoutARecorderGetsOneBelowEveryRole() throws {
        let parsed = try RoleTable.parse(Data(table(host + "," + audience).utf8), source: "FILE")
        #expect(parsed.roles.map(\.name) == [.host, .audience, .recorder])
        #expect(parsed.definition(of: .recorder) == RoleTable.recorderDefinition(rank: 8))
        #expect(parsed.label(of: .recorder) == "recorder")
    }

    @Test func aTableWithItsOwnRecorderKeepsIt() throws {
        let recorder = #"{"name": "recorder", "label": "tape", "rank": 9, "onStage": false, "permissions": []}"#
        let parsed = try RoleTable.parse(Data(table(host + "," + audience + "," + recorder).utf8), source: "FILE")
        #expect(parsed.roles.map(\.name) == [.host, .audience, .recorder])
        #expect(parsed.label(of: .recorder) == "tape")
        #expect(parsed.rank(of: .recorder) == 9)
    }

    @Test func aRecorderThatWouldDoMoreThanListenIsRefused() {
        for recorder in [
            #"{"name": "recorder", "rank": 9, "onStage": true, "permissions": []}"#,
            #"{"name": "recorder", "rank": 9, "onStage": false, "permissions": ["chat"]}"#,
        ] {
            #expect(
                throws: RoleTableError(source: "FILE", path: "roles[2]", problem: .recorderNotListener)
            ) {
                try RoleTable.parse(Data(table(host + "," + audience + "," + recorder).utf8), source: "FILE")
            }
        }
    }
}
