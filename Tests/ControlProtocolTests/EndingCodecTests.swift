import RoomCore
import Testing

@testable import RoomProtocol

/// A snapshot's `ending` (the room ends unless a host returns) and `hands_allowed` (raising hands is off), written
/// and read back, and refused when broken.
@Suite struct EndingCodecTests {
    func snapshot(ending: HostlessEnding?, handsAllowed: Bool) -> ServerMessage {
        let eli = Peer(id: "eli", name: "Eli", role: .audience, joinedAt: 1)
        return ServerMessage(
            .joined(
                JoinedSnapshot(
                    room: "jazz", selfID: "eli", peers: [AnnouncedPeer(eli)], topic: "", chat: [],
                    roles: protocolRoles, resumed: false, ending: ending, handsAllowed: handsAllowed)), seq: 4)
    }

    func text(_ message: ServerMessage) -> String {
        String(decoding: ControlCodec.encode(message), as: UTF8.self)
    }

    @Test func theSnapshotCarriesTheEndAndHandsOffOnlyWhileSo() throws {
        let ending = HostlessEnding(host: "ana", name: "Ana", at: 1_764_413_320_000)
        let both = snapshot(ending: ending, handsAllowed: false)
        #expect(ControlCodec.encode(both) == ControlCodec.json(both).encoded)
        #expect(
            text(both).contains(
                #""listed":true,"ending":{"peer":"ana","name":"Ana","at":1764413320000},"hands_allowed":false,"peers""#)
        )
        #expect(try ControlCodec.decodeServer(ControlCodec.encode(both)) == both)
        let neither = snapshot(ending: nil, handsAllowed: true)
        #expect(ControlCodec.encode(neither) == ControlCodec.json(neither).encoded)
        #expect(!text(neither).contains("ending"))
        #expect(!text(neither).contains("hands_allowed"))
        #expect(try ControlCodec.decodeServer(ControlCodec.encode(neither)) == neither)
    }

    @Test func anExplicitTrueAndANullEndAreRead() throws {
        let plain = text(snapshot(ending: nil, handsAllowed: true)).replacingOccurrences(
            of: #""listed":true,"#, with: #""listed":true,"hands_allowed":true,"ending":null,"#)
        #expect(try ControlCodec.decodeServer(plain) == snapshot(ending: nil, handsAllowed: true))
    }

    @Test func aBrokenEndIsRefused() {
        let base = text(snapshot(ending: nil, handsAllowed: true))
        let cases: [(String, String)] = [
            (#""ending":{"peer":"ana","name":"Ana"}"#, #"the field "at" is missing"#),
            (#""ending":{"name":"Ana","at":5}"#, #"the field "peer" is missing"#),
            (#""ending":{"peer":"ana","name":7,"at":5}"#, #"the field "name" must be a string"#),
        ]
        for (field, message) in cases {
            let broken = base.replacingOccurrences(of: #""listed":true,"#, with: #""listed":true,\#(field),"#)
            #expect(throws: ControlDecodeError(.badRequest, message)) { try ControlCodec.decodeServer(broken) }
        }
        let notAnObject = base.replacingOccurrences(of: #""listed":true,"#, with: #""listed":true,"ending":5,"#)
        #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeServer(notAnObject) }
        let notABool = base.replacingOccurrences(of: #""listed":true,"#, with: #""listed":true,"hands_allowed":0,"#)
        #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeServer(notABool) }
    }

    /// The client's store gets both from the snapshot.
    @Test func theModelGetsTheEndAndTheHandsSetting() {
        let ending = HostlessEnding(host: "ana", name: "Ana", at: 9)
        guard case .joined(let room)? = snapshot(ending: ending, handsAllowed: false).roomEvent(selfID: nil) else {
            Issue.record("no snapshot")
            return
        }
        #expect(room.hostlessEnding == ending)
        #expect(!room.handsAllowed)
    }
}
