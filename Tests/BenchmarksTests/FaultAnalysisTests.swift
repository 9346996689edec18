import Testing

@testable import ClusterBenchmarks

/// The fault run's judgement of what its clients saw, on records made up for each case.
struct FaultAnalysisTests {
    typealias Line = FaultAnalysis.Line
    typealias Operation = FaultAnalysis.Operation

    @Test func aRefusedChatThatAppearsLaterIsRefusedButAppliedAndAnUnconfirmedOneIsNot() {
        let operations = [
            Operation(id: 1, bot: "b1", kind: .chat, text: "c1", at: 100),
            Operation(id: 2, bot: "b1", kind: .chat, text: "c2", at: 110),
            Operation(id: 3, bot: "b2", kind: .chat, text: "c3", at: 120),
            Operation(id: 4, bot: "b2", kind: .topic, text: "t4", at: 130),
        ]
        let b1 = FaultAnalysis.BotRecord(
            identity: "b1",
            lines: [
                Line(at: 90, text: #"{"event":"joined","peers":[{"id":"b1"},{"id":"b2"}],"chat":[],"topic":""}"#),
                Line(at: 1000, text: #"{"event":"error","code":"internal","message":"try again","id":1}"#),
                Line(at: 1001, text: #"{"event":"error","code":"unconfirmed","message":"may still appear","id":2}"#),
                Line(at: 4000, text: #"{"event":"chat","from":"b1","text":"c1"}"#),
                Line(at: 4001, text: #"{"event":"chat","from":"b1","text":"c2"}"#),
            ])
        let b2 = FaultAnalysis.BotRecord(
            identity: "b2",
            lines: [
                Line(at: 95, text: #"{"event":"joined","peers":[{"id":"b1"},{"id":"b2"}],"chat":[],"topic":""}"#),
                Line(at: 1002, text: #"{"event":"error","code":"conflict","message":"no","id":3}"#),
                Line(at: 4002, text: #"{"event":"chat","from":"b1","text":"c1"}"#),
                Line(at: 4003, text: #"{"event":"topic_changed","topic":"t4","by":"b2"}"#),
            ])
        let analysis = FaultAnalysis(operations: operations, bots: [b1, b2])
        #expect(analysis.applied == 3)
        #expect(analysis.refused == 2)
        #expect(analysis.unconfirmed == 1)
        #expect(analysis.refusedButApplied == ["#1 c1 from b1, refused 'internal'"])
        #expect(analysis.duplicates.isEmpty)
    }

    @Test func aChatOneClientSawTwiceIsADuplicateButSeeingItAgainInASnapshotIsNot() {
        let operations = [Operation(id: 7, bot: "b1", kind: .chat, text: "c7", at: 100)]
        let b1 = FaultAnalysis.BotRecord(
            identity: "b1",
            lines: [
                Line(at: 200, text: #"{"event":"chat","from":"b1","text":"c7"}"#),
                Line(at: 300, text: #"{"event":"reconnected","peers":[{"id":"b1"}],"chat":[{"text":"c7"}]}"#),
            ])
        let b2 = FaultAnalysis.BotRecord(
            identity: "b2",
            lines: [
                Line(at: 200, text: #"{"event":"chat","from":"b1","text":"c7"}"#),
                Line(at: 210, text: #"{"event":"chat","from":"b1","text":"c7"}"#),
            ])
        let analysis = FaultAnalysis(operations: operations, bots: [b1, b2])
        #expect(analysis.applied == 1)
        #expect(analysis.duplicates == ["c7 seen 2 times by b2"])
    }

    @Test func aRefusedHandRaiseIsJudgedByTheHandRaisedBeforeTheNextHandRequest() {
        let operations = [
            Operation(id: 1, bot: "b3", kind: .raiseHand, at: 100),
            Operation(id: 2, bot: "b3", kind: .lowerHand, at: 5000),
            Operation(id: 3, bot: "b0", kind: .setRole, target: "b4", role: "speaker", at: 6000),
        ]
        let watcher = FaultAnalysis.BotRecord(
            identity: "b0",
            lines: [
                Line(at: 1000, text: #"{"event":"error","code":"internal","message":"try again","id":1}"#),
                Line(at: 3000, text: #"{"event":"hand_raised","peer":"b3","at":1}"#),
                Line(at: 6500, text: #"{"event":"error","code":"internal","message":"try again","id":3}"#),
                Line(at: 7000, text: #"{"event":"role_changed","peer":"b4","role":"audience","by":"b0"}"#),
                // Another's role move lowers b3's hand: not b3's own lowering.
                Line(at: 5500, text: #"{"event":"hand_lowered","peer":"b3","by":"b1"}"#),
            ])
        let analysis = FaultAnalysis(operations: operations, bots: [watcher])
        #expect(analysis.refusedButApplied == ["#1 raise_hand from b3, refused 'internal'"])
        #expect(analysis.applied == 1)
        #expect(analysis.refusedByCode == ["internal": 2])
    }

    @Test func aHandRaisedByTheSameRequestStillOnItsWayIsNotTheRefusedOnesEffect() {
        let operations = [
            Operation(id: 1, bot: "b3", kind: .raiseHand, at: 100),
            Operation(id: 2, bot: "b3", kind: .raiseHand, at: 200),
        ]
        let watcher = FaultAnalysis.BotRecord(
            identity: "b0",
            lines: [
                Line(at: 250, text: #"{"event":"hand_raised","peer":"b3","at":1}"#),
                Line(at: 300, text: #"{"event":"error","code":"conflict","message":"already raised","id":2}"#),
            ])
        let analysis = FaultAnalysis(operations: operations, bots: [watcher])
        #expect(analysis.refusedButApplied.isEmpty)
        #expect(analysis.refused == 1)
    }

    @Test func aRaiseALaggingNodeDeliversLateIsJudgedByTheTimeTheOwnerRaisedIt() {
        let operations = [Operation(id: 1, bot: "b3", kind: .raiseHand, at: 100, wallAt: 50_000)]
        let watcher = FaultAnalysis.BotRecord(
            identity: "b0",
            lines: [
                Line(at: 150, text: #"{"event":"error","code":"conflict","message":"already raised","id":1}"#),
                // Raised at 49,000 by the owner, before the request; heard late through a node catching up.
                Line(at: 900, text: #"{"event":"hand_raised","peer":"b3","at":49000}"#),
            ])
        let analysis = FaultAnalysis(operations: operations, bots: [watcher])
        #expect(analysis.refusedButApplied.isEmpty)
        #expect(analysis.applied == 0)
    }

    @Test func aGhostIsAJoinedClientMissingFromAnotherJoinedClientsList() {
        let joined = #"{"event":"joined","peers":[{"id":"a"},{"id":"b"},{"id":"c"}]}"#
        let a = FaultAnalysis.BotRecord(
            identity: "a", lines: [Line(at: 1, text: joined), Line(at: 2, text: #"{"event":"peer_left","peer":"b"}"#)])
        let b = FaultAnalysis.BotRecord(identity: "b", lines: [Line(at: 1, text: joined)])
        // c is reconnecting: not in the room as it sees it, so not a ghost, and its list does not count.
        let c = FaultAnalysis.BotRecord(
            identity: "c",
            lines: [
                Line(at: 1, text: joined),
                Line(at: 3, text: #"{"event":"peer_left","peer":"a"}"#),
                Line(at: 4, text: #"{"event":"reconnecting","attempt":1,"delay_ms":100}"#),
            ])
        #expect(FaultAnalysis.ghosts([a, b, c]) == ["b"])
    }
}
