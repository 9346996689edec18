import MediaServer
import MediaTransport
import RoomProtocol
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

func key(_ seed: UInt8) -> SRTPKey { SRTPKey(bytes: (0..<30).map { seed &+ UInt8($0) })! }

/// A peer of the test: its socket, its uplink session and a session for the room key.
final class TestPeer {
    let ssrc: UInt32
    let socket: UDPSocket
    let uplink: SRTPSession
    var downlink: SRTPSession
    let gate: PublishGate
    var sequence: UInt16 = 0

    init(ssrc: UInt32, roomKey: SRTPKey, mayPublish: Bool) throws {
        self.ssrc = ssrc
        socket = try UDPSocket(binding: .loopback(port: 0))
        uplink = try SRTPSession(key: key(UInt8(truncatingIfNeeded: ssrc)), direction: .outbound)
        downlink = try SRTPSession(key: roomKey, direction: .inbound)
        gate = PublishGate(mayPublish)
    }

    func media(room: String) -> MediaPeer {
        MediaPeer(
            room: room, peer: "p\(ssrc)", ssrc: ssrc, uplinkKey: key(UInt8(truncatingIfNeeded: ssrc)), gate: gate,
            webSocketSink: { _ in })
    }

    /// Sends an SRTCP receiver report, which binds this peer's address; waits for the server's answer.
    func bind(to forwarder: MediaForwarder) throws -> Bool {
        let report = try uplink.protect(RTCPPacket.receiverReport(ssrc: ssrc, reports: []).bytes(), rtcp: true)
        socket.send(report, to: forwarder.socket.localAddress)
        guard let answer = receive() else { return false }
        return (try? downlink.unprotect(answer, rtcp: true)) != nil
    }

    func sendAudio(to forwarder: MediaForwarder, level: UInt8 = 20) throws -> [UInt8] {
        sequence &+= 1
        let packet = RTPHeader(
            payloadType: 111, sequenceNumber: sequence, timestamp: UInt32(sequence) * 960, ssrc: ssrc
        ).packet(
            extensionElements: [.audioLevel(RTPAudioLevel(level: level, voice: true))],
            payload: [1, 2, 3, sequence.low])
        let protected = try uplink.protect(packet)
        socket.send(protected, to: forwarder.socket.localAddress)
        return packet
    }

    func receive(timeout: Int32 = 1000) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 1600)
        guard socket.waitReadable(timeoutMilliseconds: timeout) else { return nil }
        let got = buffer.withUnsafeMutableBytes { socket.receive(into: $0) }
        guard let got else { return nil }
        return Array(buffer[..<got.length])
    }
}

extension UInt16 {
    var low: UInt8 { UInt8(truncatingIfNeeded: self) }
}

func waitFor(_ condition: () -> Bool) -> Bool {
    for _ in 0..<200 {
        if condition() { return true }
        usleep(5000)
    }
    return condition()
}

@Suite(.serialized) struct MediaForwarderTests {
    let roomKey = key(200)

    func makeRoom(_ peers: [TestPeer]) throws -> MediaForwarder {
        let forwarder = try MediaForwarder(binding: .loopback(port: 0))
        forwarder.start()
        forwarder.setRoomKey(roomKey, epoch: 1, room: "r")
        for peer in peers { forwarder.add(peer.media(room: "r")) }
        for peer in peers { #expect(try peer.bind(to: forwarder)) }
        return forwarder
    }

    @Test func aSpeakersPacketReachesEveryListenerOnceProtectedWithTheRoomKey() throws {
        let speaker = try TestPeer(ssrc: 1001, roomKey: roomKey, mayPublish: true)
        let listeners = try [1002, 1003].map { try TestPeer(ssrc: UInt32($0), roomKey: roomKey, mayPublish: false) }
        let forwarder = try makeRoom([speaker] + listeners)
        defer { forwarder.stop() }
        let packet = try speaker.sendAudio(to: forwarder)
        var ciphertexts: [[UInt8]] = []
        for listener in listeners {
            let got = try #require(listener.receive())
            ciphertexts.append(got)
            #expect(try listener.downlink.unprotect(got) == packet)
        }
        #expect(ciphertexts[0] == ciphertexts[1])
        #expect(speaker.receive(timeout: 100) == nil)
        #expect(forwarder.counters.value(.forwardedPackets) == 1)
        #expect(forwarder.counters.value(.sentDatagrams) == 2)
        #expect(forwarder.counters.value(.bindings) == 3)
    }

    @Test func aRoomWiderThanOneSendBatchGetsEveryPacketOnceAndInOrder() throws {
        // 300 listeners: each packet goes out in two sendmmsg calls (the batch holds 256).
        let speaker = try TestPeer(ssrc: 7001, roomKey: roomKey, mayPublish: true)
        let listeners = try (0..<300).map { try TestPeer(ssrc: UInt32(7002 + $0), roomKey: roomKey, mayPublish: false) }
        let forwarder = try makeRoom([speaker] + listeners)
        defer { forwarder.stop() }
        let packets = try (0..<3).map { _ in try speaker.sendAudio(to: forwarder) }
        #expect(waitFor { forwarder.counters.value(.forwardedPackets) == 3 })
        for listener in listeners {
            var heard: [[UInt8]] = []
            while heard.count < 3, let got = listener.receive() { heard.append(try listener.downlink.unprotect(got)) }
            #expect(heard == packets)
            #expect(listener.receive(timeout: 0) == nil)
        }
        #expect(forwarder.counters.value(.sentDatagrams) == 900)
        #expect(forwarder.counters.value(.sendDropped) == 0)
    }

    @Test func audienceAndDemotedPeersAreDroppedAndCounted() throws {
        let speaker = try TestPeer(ssrc: 2001, roomKey: roomKey, mayPublish: true)
        let audience = try TestPeer(ssrc: 2002, roomKey: roomKey, mayPublish: false)
        let listener = try TestPeer(ssrc: 2003, roomKey: roomKey, mayPublish: false)
        let forwarder = try makeRoom([speaker, audience, listener])
        defer { forwarder.stop() }
        _ = try audience.sendAudio(to: forwarder)
        #expect(waitFor { forwarder.counters.value(.notPermitted) == 1 })
        _ = try speaker.sendAudio(to: forwarder)
        #expect(listener.receive() != nil)
        speaker.gate.set(false)
        _ = try speaker.sendAudio(to: forwarder)
        #expect(waitFor { forwarder.counters.value(.notPermitted) == 2 })
        #expect(listener.receive(timeout: 100) == nil)
        #expect(forwarder.counters.value(.forwardedPackets) == 1)
    }

    @Test func forgedReplayedUnknownAndMalformedPacketsAreCounted() throws {
        let speaker = try TestPeer(ssrc: 3001, roomKey: roomKey, mayPublish: true)
        let listener = try TestPeer(ssrc: 3002, roomKey: roomKey, mayPublish: false)
        let forwarder = try makeRoom([speaker, listener])
        defer { forwarder.stop() }
        let target = forwarder.socket.localAddress
        let packet = RTPHeader(payloadType: 111, sequenceNumber: 9, timestamp: 0, ssrc: 3001).packet(payload: [1, 2])
        let protected = try speaker.uplink.protect(packet)
        var forged = protected
        forged[13] ^= 1
        speaker.socket.send(forged, to: target)
        #expect(waitFor { forwarder.counters.value(.authenticationFailed) == 1 })
        speaker.socket.send(protected, to: target)
        #expect(listener.receive() != nil)
        speaker.socket.send(protected, to: target)
        #expect(waitFor { forwarder.counters.value(.replayed) == 1 })
        let stranger = RTPHeader(payloadType: 111, sequenceNumber: 1, timestamp: 0, ssrc: 77).packet(payload: [1])
        speaker.socket.send(stranger, to: target)
        #expect(waitFor { forwarder.counters.value(.unknownSSRC) == 1 })
        speaker.socket.send([0x40, 0, 0], to: target)
        #expect(waitFor { forwarder.counters.value(.malformed) == 1 })
        #expect(forwarder.counters.value(.forwardedPackets) == 1)
    }

    /// Listeners hold no SRTP session at the server; their reports are still replay-checked, so a captured
    /// report sent again from elsewhere cannot move their media.
    @Test func aReplayedReportCannotMoveAListenersMedia() throws {
        let speaker = try TestPeer(ssrc: 6001, roomKey: roomKey, mayPublish: true)
        let listener = try TestPeer(ssrc: 6002, roomKey: roomKey, mayPublish: false)
        let forwarder = try makeRoom([speaker, listener])
        defer { forwarder.stop() }
        let report = try listener.uplink.protect(RTCPPacket.receiverReport(ssrc: 6002, reports: []).bytes(), rtcp: true)
        listener.socket.send(report, to: forwarder.socket.localAddress)
        #expect(listener.receive() != nil)
        let attacker = try UDPSocket(binding: .loopback(port: 0))
        attacker.send(report, to: forwarder.socket.localAddress)
        #expect(waitFor { forwarder.counters.value(.replayed) == 1 })
        let packet = try speaker.sendAudio(to: forwarder)
        let got = try #require(listener.receive())
        #expect(try listener.downlink.unprotect(got) == packet)
        #expect(forwarder.counters.value(.bindings) == 2)
    }

    @Test func aRotatedRoomKeyLocksOutTheOldKey() throws {
        let speaker = try TestPeer(ssrc: 4001, roomKey: roomKey, mayPublish: true)
        let stays = try TestPeer(ssrc: 4002, roomKey: roomKey, mayPublish: false)
        let removed = try TestPeer(ssrc: 4003, roomKey: roomKey, mayPublish: false)
        let forwarder = try makeRoom([speaker, stays, removed])
        defer { forwarder.stop() }
        forwarder.removePeer(ssrc: 4003)
        let newKey = key(50)
        forwarder.setRoomKey(newKey, epoch: 2, room: "r")
        stays.downlink = try SRTPSession(key: newKey, direction: .inbound)
        usleep(50_000)
        let packet = try speaker.sendAudio(to: forwarder)
        let got = try #require(stays.receive())
        #expect(try stays.downlink.unprotect(got) == packet)
        #expect(removed.receive(timeout: 100) == nil)
        // Even holding the bytes, the old key does not open them.
        #expect(throws: SRTPError.authenticationFailed) { try removed.downlink.unprotect(got) }
    }

    @Test func activeSpeakersAreReportedFromTheAudioLevels() throws {
        let reports = Mutex<[[String: Int]]>([])
        let speaker = try TestPeer(ssrc: 5001, roomKey: roomKey, mayPublish: true)
        let forwarder = try MediaForwarder(binding: .loopback(port: 0)) { _, levels in
            reports.withLock { $0.append(Dictionary(uniqueKeysWithValues: levels.map { ($0.peer, $0.level) })) }
        }
        forwarder.start()
        defer { forwarder.stop() }
        forwarder.setRoomKey(roomKey, epoch: 1, room: "r")
        forwarder.add(speaker.media(room: "r"))
        for _ in 0..<5 { _ = try speaker.sendAudio(to: forwarder, level: 10) }
        #expect(waitFor { reports.withLock { !$0.isEmpty } })
        let first = try #require(reports.withLock { $0.first })
        #expect((first["p5001"] ?? 0) > 50)
        // Silence (no packets, as with DTX) brings the level back to 0 after the silence timeout.
        #expect(waitFor { reports.withLock { $0.last?["p5001"] == 0 } })
    }

    /// Commands reach the forwarding thread by an empty datagram to its own socket. Bound to one address (a
    /// cluster node on 127.0.0.2), that datagram must go to that address: sent to 127.0.0.1 it wakes nobody,
    /// and whoever holds 127.0.0.1 on the same port gets it instead.
    @Test func aForwarderBoundToOneAddressWakesItselfThereAndNotOn127001() throws {
        guard let address = UDPAddress(host: "127.0.0.2", port: 0),
            let forwarder = try? MediaForwarder(binding: address)
        else {
            Issue.record("127.0.0.2 does not bind here")
            return
        }
        forwarder.start()
        defer { forwarder.stop() }
        let port = forwarder.socket.localAddress.port
        let bystander = try UDPSocket(binding: .loopback(port: port))
        forwarder.setRoomKey(roomKey, epoch: 1, room: "r")
        forwarder.closeRoom("r")
        #expect(!bystander.waitReadable(timeoutMilliseconds: 200))
    }
}
