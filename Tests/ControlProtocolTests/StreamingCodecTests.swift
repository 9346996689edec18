import Foundation
import RoomCore
import Testing

@testable import RoomProtocol

/// Streaming on the wire: the `streaming` event, the snapshot's fields, the requests and a stream's header.
@Suite struct StreamingCodecTests {
    func text(_ message: ServerMessage) -> String { String(decoding: ControlCodec.encode(message), as: UTF8.self) }

    @Test func theEventSaysWhereWhoAndSince() throws {
        let started = ServerMessage(
            .streaming(StreamingState(to: ["radio", "hls"], since: 1_000), by: "ana", reason: nil), seq: 7)
        #expect(text(started) == #"{"type":"streaming","seq":7,"to":["radio","hls"],"since":1000,"by":"ana"}"#)
        #expect(try ControlCodec.decodeServer(ControlCodec.encode(started)) == started)
        let failed = ServerMessage(.streaming(nil, by: nil, reason: "its recorder keeps failing"), seq: 8)
        #expect(text(failed) == #"{"type":"streaming","seq":8,"to":[],"reason":"its recorder keeps failing"}"#)
        #expect(try ControlCodec.decodeServer(ControlCodec.encode(failed)) == failed)
    }

    @Test func badEventsAreRefused() {
        let cases: [String] = [
            #"{"type":"streaming","seq":1}"#,
            #"{"type":"streaming","seq":1,"to":["radio"]}"#,
            #"{"type":"streaming","seq":1,"to":["Radio"],"since":1}"#,
            #"{"type":"streaming","seq":1,"to":["radio","radio"],"since":1}"#,
            #"{"type":"streaming","seq":1,"to":[7],"since":1}"#,
        ]
        for json in cases {
            #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeServer(Array(json.utf8)) }
        }
    }

    @Test func theRequestsNameADestination() throws {
        for request in [ClientRequest.startStream("radio"), .stopStream("radio"), .streamStatus("Streaming is back.")] {
            let message = ClientMessage(request, id: .integer(3))
            #expect(try ControlCodec.decodeClient(ControlCodec.encode(message)) == message)
        }
        #expect(
            String(decoding: ControlCodec.encode(ClientMessage(.startStream("radio"), id: nil)), as: UTF8.self)
                == #"{"type":"start_stream","to":"radio"}"#)
        #expect(throws: ControlDecodeError.self) {
            try ControlCodec.decodeClient(Array(#"{"v":1,"type":"start_stream","to":"Radio Two"}"#.utf8))
        }
        #expect(throws: ControlDecodeError.self) {
            try ControlCodec.decodeClient(Array(#"{"v":1,"type":"stop_stream"}"#.utf8))
        }
    }

    @Test func theHeaderIsADestinationsName() throws {
        #expect(try ControlCodec.decodeStreamHeader(nil) == nil)
        #expect(try ControlCodec.decodeStreamHeader("radio") == "radio")
        #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeStreamHeader("../x") }
        #expect(ControlCodec.streamHeader == "X-Clubroom-Stream")
    }

    @Test func theListingSaysWhereARoomStreams() throws {
        let listing = RoomListing(
            room: "jazz", topic: "", stage: [], onStage: 0, listeners: 2, raisedHands: 0, startedAt: 5,
            streaming: ["radio"])
        let json = DirectoryCodec.json(listing)
        guard case .object(let object) = json else { return }
        #expect(object["streaming"] == .array([.string("radio")]))
        #expect(try DirectoryCodec.readListing(json) == listing)
        var plain = listing
        plain.streaming = []
        guard case .object(let none) = DirectoryCodec.json(plain) else { return }
        #expect(none["streaming"] == nil)
    }

    @Test func everyCutOfTheEventAndTheRequestsIsCleanlyRefused() {
        let event = ControlCodec.encode(
            ServerMessage(
                .streaming(StreamingState(to: ["radio", "hls"], since: 5), by: "ana", reason: "gone"), seq: 8))
        for end in 0..<event.count {
            #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeServer(event[0..<end]) }
        }
        for request in [ClientRequest.startStream("radio"), .streamStatus("Streaming to radio is back.")] {
            let bytes = ControlCodec.encode(ClientMessage(request, id: .integer(1)))
            for end in 0..<bytes.count {
                #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeClient(bytes[0..<end]) }
            }
        }
    }
}
