import MediaTransport
import MediaWire
import Testing

@testable import MediaServer

/// RFC 2198 redundancy through the forwarder: as sent to listeners who take it (under the speaker's RED SSRC),
/// cut to its primary frame for the others (under the speaker's own), and a malformed RED payload dropped.
@Suite(.serialized) struct REDForwardingTests {
    let roomKey = key(90)

    func redPacket(_ speaker: TestPeer, payload: [UInt8]) throws -> [UInt8] {
        speaker.sequence &+= 1
        let packet = RTPHeader(
            payloadType: RTPAudioProfile.redPayloadType, sequenceNumber: speaker.sequence,
            timestamp: UInt32(speaker.sequence) * 960, ssrc: speaker.ssrc
        ).packet(extensionElements: [.audioLevel(RTPAudioLevel(level: 20, voice: true))], payload: payload)
        speaker.socket.send(try speaker.uplink.protect(packet), to: speaker.sendTo!)
        return packet
    }

    @Test func listenersWhoTakeREDGetItWholeAndTheOthersGetThePrimaryAlone() throws {
        let speaker = try TestPeer(ssrc: 2000, roomKey: roomKey, mayPublish: true)
        let takesRED = try TestPeer(ssrc: 2002, roomKey: roomKey, mayPublish: false)
        let primaryOnly = try TestPeer(ssrc: 2004, roomKey: roomKey, mayPublish: false)
        let forwarder = try MediaForwarder(binding: .loopback(port: 0))
        forwarder.start()
        defer { forwarder.stop() }
        forwarder.setRoomKey(roomKey, epoch: 1, room: "r")
        for peer in [speaker, takesRED, primaryOnly] { forwarder.add(peer.media(room: "r")) }
        forwarder.setTakesRED(ssrc: takesRED.ssrc)
        for peer in [speaker, takesRED, primaryOnly] { #expect(try peer.bind(to: forwarder)) }
        speaker.sendTo = forwarder.socket.localAddress

        let payload = REDPayload.encode(
            primary: [9, 8, 7, 6], payloadType: 111, earlier: [REDPayload.Earlier(timestampOffset: 960, bytes: [4, 5])])
        let sent = try redPacket(speaker, payload: payload)

        var whole = sent
        whole[11] |= 1
        #expect(try takesRED.downlink.unprotect(try #require(takesRED.receive())) == whole)
        let primary = RTPHeader(payloadType: 111, sequenceNumber: 1, timestamp: 960, ssrc: 2000)
            .packet(extensionElements: [.audioLevel(RTPAudioLevel(level: 20, voice: true))], payload: [9, 8, 7, 6])
        #expect(try primaryOnly.downlink.unprotect(try #require(primaryOnly.receive())) == primary)
        #expect(forwarder.counters.value(.forwardedPackets) == 1)
        #expect(forwarder.counters.value(.sentDatagrams) == 2)

        // A plain Opus packet: the same bytes to both, each under its own SSRC.
        let plain = try speaker.sendAudio(to: forwarder)
        var aliased = plain
        aliased[11] |= 1
        #expect(try takesRED.downlink.unprotect(try #require(takesRED.receive())) == aliased)
        #expect(try primaryOnly.downlink.unprotect(try #require(primaryOnly.receive())) == plain)

        // A RED payload whose block runs past its end is dropped for everyone and counted.
        let malformed = forwarder.counters.value(.malformed)
        _ = try redPacket(speaker, payload: [0xEF, 0x0F, 0x00, 0x09, 0x6F, 1])
        #expect(takesRED.receive(timeout: 200) == nil)
        #expect(primaryOnly.receive(timeout: 10) == nil)
        #expect(forwarder.counters.value(.malformed) == malformed + 1)
        #expect(forwarder.counters.value(.forwardedPackets) == 2)
    }

    @Test func aRoomWhereNobodyTakesREDGetsThePrimaryAsBefore() throws {
        let speaker = try TestPeer(ssrc: 2010, roomKey: roomKey, mayPublish: true)
        let listener = try TestPeer(ssrc: 2012, roomKey: roomKey, mayPublish: false)
        let forwarder = try MediaForwarder(binding: .loopback(port: 0))
        forwarder.start()
        defer { forwarder.stop() }
        forwarder.setRoomKey(roomKey, epoch: 1, room: "r")
        for peer in [speaker, listener] { forwarder.add(peer.media(room: "r")) }
        for peer in [speaker, listener] { #expect(try peer.bind(to: forwarder)) }
        speaker.sendTo = forwarder.socket.localAddress
        _ = try redPacket(speaker, payload: REDPayload.encode(primary: [1, 2], payloadType: 111, earlier: []))
        let got = try listener.downlink.unprotect(try #require(listener.receive()))
        let header = try RTPHeader.parse(got)
        #expect(header.payloadType == 111 && header.ssrc == 2010)
        #expect(Array(got[header.payloadRange]) == [1, 2])
    }
}
