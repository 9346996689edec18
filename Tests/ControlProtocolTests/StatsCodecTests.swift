import RoomCore
import Testing

@testable import RoomProtocol

/// The `stats` request and its answer: each person's speaking time and turns.
@Suite struct StatsCodecTests {
    @Test func theRequestIsItsTypeAndID() throws {
        #expect(
            String(decoding: ControlCodec.encode(ClientMessage(.stats, id: .integer(3))), as: UTF8.self)
                == #"{"type":"stats","id":3}"#)
        #expect(try ControlCodec.decodeClient(#"{"type":"stats"}"#) == ClientMessage(.stats))
    }

    @Test func theAnswerCarriesSecondsToATenthAndTheIdentityBesideThePeer() {
        let people = [
            SpeakingStat(peer: "ana", name: "Ana", milliseconds: 12_449, turns: 3, talking: true),
            SpeakingStat(peer: "eli", name: "Eli", milliseconds: 3_950, turns: 1, talking: false),
        ]
        let bytes = ControlCodec.encode(ServerMessage(.stats(people: people, id: .string("s1")), seq: nil))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"type":"stats","people":[{"peer":"ana","identity":"ana","name":"Ana","seconds":12.4,"turns":3,"#
                + #""talking":true},{"peer":"eli","identity":"eli","name":"Eli","seconds":4.0,"turns":1,"talking":false}],"#
                + #""id":"s1"}"#)
    }

    @Test func theAnswerReadsBackToTheTenth() throws {
        let message = try ControlCodec.decodeServer(
            #"{"type":"stats","people":[{"peer":"ana","name":"Ana","seconds":12.4,"turns":3,"talking":false},"#
                + #"{"peer":"bo","name":"Bo","seconds":7,"turns":2,"talking":true}]}"#)
        #expect(
            message
                == ServerMessage(
                    .stats(
                        people: [
                            SpeakingStat(peer: "ana", name: "Ana", milliseconds: 12_400, turns: 3, talking: false),
                            SpeakingStat(peer: "bo", name: "Bo", milliseconds: 7_000, turns: 2, talking: true),
                        ], id: nil), seq: nil))
        #expect(
            try ControlCodec.decodeServer(#"{"type":"stats","people":[]}"#)
                == ServerMessage(.stats(people: [], id: nil), seq: nil))
    }

    @Test func aBadAnswerIsRefusedNamingTheField() {
        #expect(throws: ControlDecodeError(.badRequest, "the field \"seconds\" must be between 0 and a year")) {
            try ControlCodec.decodeServer(
                #"{"type":"stats","people":[{"peer":"a","name":"A","seconds":-1,"turns":0,"talking":false}]}"#)
        }
        #expect(throws: ControlDecodeError(.badRequest, "the field \"seconds\" must be a number")) {
            try ControlCodec.decodeServer(
                #"{"type":"stats","people":[{"peer":"a","name":"A","seconds":"1","turns":0,"talking":false}]}"#)
        }
        #expect(throws: ControlDecodeError(.badRequest, "the field \"turns\" must be between 0 and 2147483647")) {
            try ControlCodec.decodeServer(
                #"{"type":"stats","people":[{"peer":"a","name":"A","seconds":1,"turns":-2,"talking":false}]}"#)
        }
        #expect(throws: ControlDecodeError(.badRequest, "the field \"people\" is missing")) {
            try ControlCodec.decodeServer(#"{"type":"stats"}"#)
        }
        let many = Array(repeating: #"{"peer":"a","name":"A","seconds":1,"turns":1,"talking":false}"#, count: 501)
        #expect(throws: ControlDecodeError(.badRequest, "\"people\" lists more than 500 people")) {
            try ControlCodec.decodeServer(#"{"type":"stats","people":["# + many.joined(separator: ",") + "]}")
        }
    }

    /// A client cleans the names a server sends before anything shows them.
    @Test func namesAndIdentitiesAreCleanedLikeEveryServerString() {
        let raw = ServerMessage(
            .stats(
                people: [SpeakingStat(peer: "a\u{1B}b", name: "  ", milliseconds: 1, turns: 1, talking: false)],
                id: nil), seq: nil)
        #expect(
            raw.sanitized
                == ServerMessage(
                    .stats(
                        people: [SpeakingStat(peer: "ab", name: "ab", milliseconds: 1, turns: 1, talking: false)],
                        id: nil), seq: nil))
    }
}
