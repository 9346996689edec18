import Foundation
import Testing

@testable import RoomCore

/// Where the room streams, as a client's state follows it action by action, and who may start and stop it.
@Suite struct StreamingEventTests {
    let radio = StreamingState(to: ["radio"], since: 1_000)
    let both = StreamingState(to: ["radio", "hls"], since: 1_000)

    @Test func aStreamThatStartsIsKept() {
        var state = joinedRoom(as: "dara")
        let before = state
        #expect(state.apply(.streaming(radio, by: "ana", reason: nil), seq: 11) == [])
        #expect(
            state
                == before.with {
                    $0.streaming = radio; $0.lastSeq = 11
                })
    }

    @Test func aSecondDestinationAddsToTheSet() {
        var state = joinedRoom(as: "dara")
        state.apply(.streaming(radio, by: "ana", reason: nil), seq: 11)
        state.apply(.streaming(both, by: "ana", reason: nil), seq: 12)
        #expect(state.streaming == both)
    }

    @Test func theSameSetAgainChangesNothing() {
        var state = joinedRoom(as: "dara")
        state.apply(.streaming(radio, by: "ana", reason: nil), seq: 11)
        let before = state
        state.apply(.streaming(radio, by: "ana", reason: nil), seq: 12)
        #expect(
            state
                == before.with {
                    $0.lastSeq = 12; $0.ignoredEvents = IgnoredEvents([.noChange: 1])
                })
    }

    @Test func anEmptySetIsNotStreaming() {
        var state = joinedRoom(as: "dara")
        state.apply(.streaming(both, by: "ana", reason: nil), seq: 11)
        state.apply(.streaming(StreamingState(to: [], since: 1_000), by: nil, reason: "refused"), seq: 12)
        #expect(state.streaming == nil)
        state.apply(.streaming(radio, by: "ana", reason: nil), seq: 13)
        state.apply(.streaming(nil, by: "ana", reason: nil), seq: 14)
        #expect(state.streaming == nil)
    }

    @Test func theSnapshotCarriesTheStreamsAndTheDestinations() {
        var state = RoomState(roles: roles)
        let snapshot = RoomSnapshot(
            roomID: "lobby", selfID: "ana", peers: roomPeers, seq: 10, streaming: radio,
            streamDestinations: ["radio", "hls"])
        _ = reduce(&state, .server(.joined(snapshot), seq: 10))
        #expect(state.streaming == radio)
        #expect(state.streamDestinations == ["radio", "hls"])
    }

    @Test func theRoomsEndStopsItsStreams() {
        var state = joinedRoom(as: "dara")
        state.apply(.streaming(radio, by: "ana", reason: nil), seq: 11)
        state.apply(.roomEnded(reason: "done"), seq: 12)
        #expect(state.streaming == nil)
    }
}

@Suite struct StreamingRequestTests {
    @Test func onlyHostsMayStream() {
        #expect(roles.can(.host, .stream))
        #expect(!roles.can(.moderator, .stream))
        #expect(!roles.can(.speaker, .stream))
        #expect(!roles.can(.audience, .stream))
        #expect(!roles.can(.recorder, .stream))
        #expect(Permission.stream.phrase == "start and stop streaming the room")
        var state = joinedRoom(as: "bo")
        let refused = [Effect.notice(Notice(.refusal, "only hosts can start and stop streaming the room"))]
        #expect(reduce(&state, .request(.startStream("radio"))) == refused)
        #expect(reduce(&state, .request(.stopStream("radio"))) == refused)
    }

    @Test func aHostStartsWhereTheRoomDoesNotStreamAndStopsWhereItDoes() {
        var state = joinedRoom(as: "ana")
        #expect(reduce(&state, .request(.startStream("radio"))) == [.send(.startStream("radio"))])
        #expect(
            reduce(&state, .request(.stopStream("radio")))
                == [.notice(Notice(.refusal, "the room does not stream to radio"))])
        state.apply(.streaming(StreamingState(to: ["radio"], since: 1), by: "ana", reason: nil), seq: 11)
        #expect(
            reduce(&state, .request(.startStream("radio")))
                == [.notice(Notice(.refusal, "the room already streams to radio; /stream stop radio stops it"))])
        #expect(reduce(&state, .request(.stopStream("radio"))) == [.send(.stopStream("radio"))])
    }

    @Test func aDestinationTheServerDoesNotHaveIsSaidAtOnce() {
        var state = RoomState(roles: roles)
        _ = reduce(
            &state,
            .server(
                .joined(
                    RoomSnapshot(
                        roomID: "lobby", selfID: "ana", peers: roomPeers, seq: 10, streamDestinations: ["a", "b"])),
                seq: 10))
        #expect(
            reduce(&state, .request(.startStream("radio")))
                == [.notice(Notice(.refusal, "this server has no stream named radio; it has: a, b"))])
        #expect(ClientRequest.noSuchStream("x", destinations: []) == "this server has no streams configured")
    }

    @Test func onlyARecorderReportsAStreamsState() {
        var state = joinedRoom(as: "ana")
        #expect(
            reduce(&state, .request(.streamStatus("x")))
                == [.notice(Notice(.refusal, "only a stream's recorder reports how its stream goes"))])
        let recorder = peer("rec", "Recorder", .recorder)
        #expect(roles.check(.streamStatus("Streaming to radio is back."), by: recorder, target: nil) == nil)
    }

    @Test func slashStreamListsStartsAndStops() {
        #expect(parse("/stream") == .success(.stream(.list)))
        #expect(parse("/stream Radio") == .success(.stream(.start("radio"))))
        #expect(parse("/stream stop radio") == .success(.stream(.stop("radio"))))
        #expect(parse("/stream radio hls").isFailure)
    }

    @Test func destinationNames() {
        #expect(StreamingState.isName("radio-2"))
        #expect(!StreamingState.isName(""))
        #expect(!StreamingState.isName("Radio"))
        #expect(!StreamingState.isName("a_b"))
        #expect(StreamingState.isName(String(repeating: "a", count: 32)))
        #expect(!StreamingState.isName(String(repeating: "a", count: 33)))
    }
}

/// A role table written before streaming lets its hosts stream.
@Suite struct StreamRoleTableTests {
    func table(_ roles: String) -> String { #"{"version": 1, "roles": [\#(roles)]}"# }
    let audience = #"{"name": "audience", "rank": 7, "onStage": false, "permissions": []}"#

    @Test func aTableWithoutTheStreamPermissionGivesItToHosts() throws {
        let host = #"{"name": "host", "rank": 0, "onStage": true, "permissions": ["end_room"]}"#
        let parsed = try RoleTable.parse(Data(table(host + "," + audience).utf8), source: "FILE")
        #expect(parsed.definition(of: .host)?.permissions == [.endRoom, .stream])
        #expect(!parsed.can(.audience, .stream))
    }

    @Test func aTableThatGivesItToSomeoneKeepsItsChoice() throws {
        let host = #"{"name": "host", "rank": 0, "onStage": true, "permissions": ["end_room"]}"#
        let audience = #"{"name": "audience", "rank": 7, "onStage": false, "permissions": ["stream"]}"#
        let parsed = try RoleTable.parse(Data(table(host + "," + audience).utf8), source: "FILE")
        #expect(!parsed.can(.host, .stream))
        #expect(parsed.can(.audience, .stream))
    }
}

extension Result {
    fileprivate var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
