import Foundation
import MediaTransport
import MediaWire
import RoomTesting
import Synchronization
import Testing

@testable import MediaServer

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
    /// Where RED packets of `REDForwardingTests` go.
    var sendTo: UDPAddress?

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

    /// Sends an SRTCP receiver report from `socket` (this peer's own by default) and answers the server's consent
    /// nonce, which binds this peer's media to that address; waits for the server's answers (throws when one does
    /// not open under the room key).
    func bind(to forwarder: MediaForwarder, from socket: UDPSocket? = nil) throws -> Bool {
        let socket = socket ?? self.socket
        let report = try uplink.protect(RTCPPacket.receiverReport(ssrc: ssrc, reports: []).bytes(), rtcp: true)
        socket.send(report, to: forwarder.socket.localAddress)
        guard let first = receive(on: socket) else { return false }
        // A forwarder that binds at the first packet answers with its report alone.
        guard let nonce = try consentNonce(in: first) else { return true }
        try answer(nonce, from: socket, to: forwarder)
        guard let answer = receive(on: socket) else { return false }
        return (try? downlink.unprotect(answer, rtcp: true)) != nil
    }

    /// The consent nonce in an SRTCP packet from the server, if it carries one.
    func consentNonce(in packet: [UInt8]?) throws -> [UInt8]? {
        guard let packet else { return nil }
        for case .consent(_, let nonce) in try RTCPPacket.parseCompound(try downlink.unprotect(packet, rtcp: true)) {
            return nonce
        }
        return nil
    }

    /// Sends `nonce` back in a report from `socket`.
    func answer(_ nonce: [UInt8], from socket: UDPSocket, to forwarder: MediaForwarder) throws {
        let answer = try uplink.protect(
            RTCPPacket.receiverReport(ssrc: ssrc, reports: []).bytes()
                + RTCPPacket.consent(ssrc: ssrc, nonce: nonce).bytes(), rtcp: true)
        socket.send(answer, to: forwarder.socket.localAddress)
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

    func receive(timeout: Int32 = 1000, on socket: UDPSocket? = nil) -> [UInt8]? {
        let socket = socket ?? self.socket
        var buffer = [UInt8](repeating: 0, count: 1600)
        guard socket.waitReadable(timeoutMilliseconds: timeout) else { return nil }
        let got = buffer.withUnsafeMutableBytes { socket.receive(into: $0) }
        guard let got else { return nil }
        return Array(buffer[..<got.length])
    }
}

/// Whether this machine routes 127.0.0.5 (Linux does, for all of 127.0.0.0/8).
let otherLoopbackAddresses = (try? UDPSocket(binding: UDPAddress(host: "127.0.0.5", port: 0)!)) != nil

extension UInt16 {
    var low: UInt8 { UInt8(truncatingIfNeeded: self) }
}

@Suite(.ownThread, .serialized) struct MediaForwarderTests {
    let roomKey = key(200)

    func makeRoom(_ peers: [TestPeer], bindsAtFirstPacket: Bool = false) throws -> MediaForwarder {
        let forwarder = try MediaForwarder(binding: .loopback(port: 0), bindsAtFirstPacket: bindsAtFirstPacket)
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

    /// A speaker's sequence numbers wrapping is noted for the room, once, and a packet that comes late across the
    /// wrap is not a second one.
    @Test func aWrapOfASpeakersSequenceNumbersIsNotedOnce() throws {
        let speaker = try TestPeer(ssrc: 1001, roomKey: roomKey, mayPublish: true)
        let listener = try TestPeer(ssrc: 1002, roomKey: roomKey, mayPublish: false)
        let forwarder = try makeRoom([speaker, listener])
        defer { forwarder.stop() }
        speaker.sequence = 65_533
        _ = try speaker.sendAudio(to: forwarder)
        #expect(listener.receive() != nil)
        #expect(!forwarder.takeWrapped("r"))
        // 0 goes out before 65,535, which comes late.
        speaker.sequence = 65_535
        _ = try speaker.sendAudio(to: forwarder)
        #expect(listener.receive() != nil)
        speaker.sequence = 65_534
        _ = try speaker.sendAudio(to: forwarder)
        #expect(listener.receive() != nil)
        #expect(forwarder.takeWrapped("r"))
        #expect(!forwarder.takeWrapped("r"))
        speaker.sequence = 0
        for _ in 0..<3 {
            _ = try speaker.sendAudio(to: forwarder)
            #expect(listener.receive() != nil)
        }
        #expect(!forwarder.takeWrapped("r"))
    }

    @Test func aRoomWiderThanOneSendBatchGetsEveryPacketOnceAndInOrder() throws {
        // 300 listeners: each packet goes out in two sendmmsg calls (the batch holds 256).
        let speaker = try TestPeer(ssrc: 7001, roomKey: roomKey, mayPublish: true)
        let listeners = try (0..<300).map { try TestPeer(ssrc: UInt32(7002 + $0), roomKey: roomKey, mayPublish: false) }
        let forwarder = try makeRoom([speaker] + listeners)
        defer { forwarder.stop() }
        let packets = try (0..<3).map { _ in try speaker.sendAudio(to: forwarder) }
        #expect(waitUntil(limit: 1) { forwarder.counters.value(.forwardedPackets) == 3 })
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
        #expect(waitUntil(limit: 1) { forwarder.counters.value(.notPermitted) == 1 })
        _ = try speaker.sendAudio(to: forwarder)
        #expect(listener.receive() != nil)
        speaker.gate.set(false)
        _ = try speaker.sendAudio(to: forwarder)
        #expect(waitUntil(limit: 1) { forwarder.counters.value(.notPermitted) == 2 })
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
        #expect(waitUntil(limit: 1) { forwarder.counters.value(.authenticationFailed) == 1 })
        speaker.socket.send(protected, to: target)
        #expect(listener.receive() != nil)
        speaker.socket.send(protected, to: target)
        #expect(waitUntil(limit: 1) { forwarder.counters.value(.replayed) == 1 })
        let stranger = RTPHeader(payloadType: 111, sequenceNumber: 1, timestamp: 0, ssrc: 77).packet(payload: [1])
        speaker.socket.send(stranger, to: target)
        #expect(waitUntil(limit: 1) { forwarder.counters.value(.unknownSSRC) == 1 })
        speaker.socket.send([0x40, 0, 0], to: target)
        #expect(waitUntil(limit: 1) { forwarder.counters.value(.malformed) == 1 })
        #expect(forwarder.counters.value(.forwardedPackets) == 1)
    }

    /// Listeners hold no SRTP session at the server; their reports are still replay-checked, so a captured
    /// report sent again from elsewhere cannot move their media.
    @Test func aReplayedReportCannotMoveAListenersMedia() throws {
        let speaker = try TestPeer(ssrc: 6001, roomKey: roomKey, mayPublish: true)
        let listener = try TestPeer(ssrc: 6002, roomKey: roomKey, mayPublish: false)
        let forwarder = try makeRoom([speaker, listener])
        defer { forwarder.stop() }
        // A report from the listener's bound address, answered there.
        let report = try listener.uplink.protect(RTCPPacket.receiverReport(ssrc: 6002, reports: []).bytes(), rtcp: true)
        listener.socket.send(report, to: forwarder.socket.localAddress)
        #expect(listener.receive() != nil)
        let attacker = try UDPSocket(binding: .loopback(port: 0))
        attacker.send(report, to: forwarder.socket.localAddress)
        #expect(waitUntil(limit: 1) { forwarder.counters.value(.replayed) == 1 })
        let packet = try speaker.sendAudio(to: forwarder)
        let got = try #require(listener.receive())
        #expect(try listener.downlink.unprotect(got) == packet)
        #expect(forwarder.counters.value(.bindings) == 2)
    }

    /// One report that authenticates under a listener's key, from another address (as a spoofed source would
    /// make it), moves nothing: that address gets one consent nonce and no media, a second such report within
    /// the second gets nothing, and the listener keeps hearing the room where it is.
    @Test(.enabled(if: otherLoopbackAddresses, "127.0.0.5 does not bind here"))
    func aSpoofedReportFromAnotherAddressDoesNotMoveTheListenersMedia() throws {
        let speaker = try TestPeer(ssrc: 13_001, roomKey: roomKey, mayPublish: true)
        let listener = try TestPeer(ssrc: 13_002, roomKey: roomKey, mayPublish: false)
        let forwarder = try makeRoom([speaker, listener])
        defer { forwarder.stop() }
        // Past the second in which the listener's own binding had its nonce.
        usleep(1_100_000)
        let victim = try UDPSocket(binding: UDPAddress(host: "127.0.0.5", port: 0)!)
        for _ in 0..<2 {
            let spoofed = try listener.uplink.protect(
                RTCPPacket.receiverReport(ssrc: listener.ssrc, reports: []).bytes(), rtcp: true)
            victim.send(spoofed, to: forwarder.socket.localAddress)
        }
        #expect(waitUntil(limit: 1) { forwarder.counters.value(.consentLimited) == 1 })
        #expect(forwarder.counters.value(.consentChecks) == 3)
        let packet = try speaker.sendAudio(to: forwarder)
        let got = try #require(listener.receive())
        #expect(try listener.downlink.unprotect(got) == packet)
        var buffer = [UInt8](repeating: 0, count: 1600)
        var atVictim: [Bool] = []
        while victim.waitReadable(timeoutMilliseconds: 200),
            let datagram = buffer.withUnsafeMutableBytes({ victim.receive(into: $0) })
        {
            atVictim.append(
                buffer.withUnsafeBytes { RTCPPacket.isRTCP(UnsafeRawBufferPointer(rebasing: $0[..<datagram.length])) })
        }
        // One datagram, the nonce (RTCP): no media.
        #expect(atVictim == [true])
        #expect(forwarder.counters.value(.bindings) == 2)
    }

    /// A listener whose address really changes (its socket is bound again) gets its media at the new address once
    /// it answers the nonce there, and not before.
    @Test func aListenerWhoseAddressChangesGetsItsMediaThereOnceItAnswersTheNonce() throws {
        let speaker = try TestPeer(ssrc: 14_001, roomKey: roomKey, mayPublish: true)
        let listener = try TestPeer(ssrc: 14_002, roomKey: roomKey, mayPublish: false)
        let forwarder = try makeRoom([speaker, listener])
        defer { forwarder.stop() }
        usleep(1_100_000)
        let moved = try UDPSocket(binding: .loopback(port: 0))
        let report = try listener.uplink.protect(
            RTCPPacket.receiverReport(ssrc: listener.ssrc, reports: []).bytes(), rtcp: true)
        moved.send(report, to: forwarder.socket.localAddress)
        let nonce = try #require(try listener.consentNonce(in: listener.receive(on: moved)))
        // Not answered yet: the media still goes to the old address.
        let before = try speaker.sendAudio(to: forwarder)
        #expect(try listener.downlink.unprotect(try #require(listener.receive())) == before)
        #expect(listener.receive(timeout: 100, on: moved) == nil)
        try listener.answer(nonce, from: moved, to: forwarder)
        #expect(listener.receive(on: moved) != nil)
        #expect(forwarder.counters.value(.bindings) == 3)
        let after = try speaker.sendAudio(to: forwarder)
        #expect(try listener.downlink.unprotect(try #require(listener.receive(on: moved))) == after)
        #expect(listener.receive(timeout: 100) == nil)
    }

    /// Media stops going to an address nothing authenticated came from for the consent lifetime (30 s; 1 s here),
    /// and goes there again once the peer is back and answers a new nonce.
    @Test func mediaStopsGoingToAnAddressSilentForTheConsentLifetime() throws {
        let speaker = try TestPeer(ssrc: 15_001, roomKey: roomKey, mayPublish: true)
        let listener = try TestPeer(ssrc: 15_002, roomKey: roomKey, mayPublish: false)
        let forwarder = try MediaForwarder(binding: .loopback(port: 0), consentLifetime: 1000)
        forwarder.start()
        defer { forwarder.stop() }
        forwarder.setRoomKey(roomKey, epoch: 1, room: "r")
        forwarder.add(speaker.media(room: "r"))
        forwarder.add(listener.media(room: "r"))
        #expect(try speaker.bind(to: forwarder))
        #expect(try listener.bind(to: forwarder))
        // The speaker keeps its consent by speaking (every 100 ms); the listener says nothing.
        var heard = 0
        for _ in 0..<40 where forwarder.counters.value(.consentLapsed) == 0 {
            _ = try speaker.sendAudio(to: forwarder)
            if listener.receive(timeout: 100) != nil { heard += 1 }
            usleep(100_000)
        }
        #expect(heard > 0)
        #expect(forwarder.counters.value(.consentLapsed) == 1)
        _ = try speaker.sendAudio(to: forwarder)
        while listener.receive(timeout: 200) != nil {}
        _ = try speaker.sendAudio(to: forwarder)
        #expect(listener.receive(timeout: 200) == nil)
        #expect(forwarder.counters.value(.consentLapsed) == 1)
        #expect(try listener.bind(to: forwarder))
        let packet = try speaker.sendAudio(to: forwarder)
        #expect(try listener.downlink.unprotect(try #require(listener.receive())) == packet)
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
        #expect(waitUntil(limit: 1) { reports.withLock { !$0.isEmpty } })
        let first = try #require(reports.withLock { $0.first })
        #expect((first["p5001"] ?? 0) > 50)
        // Silence (no packets, as with DTX) brings the level back to 0 after the silence timeout.
        #expect(waitUntil(limit: 1) { reports.withLock { $0.last?["p5001"] == 0 } })
    }

    /// Commands reach the forwarding thread by an empty datagram to its own socket. Bound to one address (a
    /// cluster node on 127.0.0.2), that datagram must go to that address: sent to 127.0.0.1 it wakes nobody,
    /// and whoever holds 127.0.0.1 on the same port gets it instead.
    @Test func aForwarderBoundToOneAddressWakesItselfThereAndNotOn127001() throws {
        // The bystander takes the forwarder's port on 127.0.0.1, which another program may hold: a few tries.
        var bound: (MediaForwarder, UDPSocket)?
        for _ in 0..<20 where bound == nil {
            guard let address = UDPAddress(host: "127.0.0.2", port: 0),
                let forwarder = try? MediaForwarder(binding: address)
            else {
                Issue.record("127.0.0.2 does not bind here")
                return
            }
            if let bystander = try? UDPSocket(binding: .loopback(port: forwarder.socket.localAddress.port)) {
                bound = (forwarder, bystander)
            }
        }
        let (forwarder, bystander) = try #require(bound, "no port free on both 127.0.0.2 and 127.0.0.1")
        forwarder.start()
        defer { forwarder.stop() }
        forwarder.setRoomKey(roomKey, epoch: 1, room: "r")
        forwarder.closeRoom("r")
        #expect(!bystander.waitReadable(timeoutMilliseconds: 200))
    }

    /// A big room's packet is sent in turns: a small room's packet that arrives with it leaves in the first
    /// turn (newest first, so first of all), not after every one of the big room's listeners.
    @Test func aSmallRoomsPacketDoesNotWaitForABigRoomsWholeFanout() throws {
        let smallKey = key(90)
        // The crowd shares one socket and binds with one report each, without the consent round trip.
        let forwarder = try MediaForwarder(binding: .loopback(port: 0), bindsAtFirstPacket: true)
        forwarder.start()
        defer { forwarder.stop() }
        forwarder.setRoomKey(roomKey, epoch: 1, room: "big")
        forwarder.setRoomKey(smallKey, epoch: 1, room: "small")
        let bigSpeaker = try TestPeer(ssrc: 9001, roomKey: roomKey, mayPublish: true)
        let smallSpeaker = try TestPeer(ssrc: 9002, roomKey: smallKey, mayPublish: true)
        forwarder.add(bigSpeaker.media(room: "big"))
        forwarder.add(smallSpeaker.media(room: "small"))
        #expect(try bigSpeaker.bind(to: forwarder))
        #expect(try smallSpeaker.bind(to: forwarder))
        // Every listener of both rooms is on one socket, so the order it receives in is the order of sending.
        let ear = try UDPSocket(binding: .loopback(port: 0), bufferBytes: 8 << 20)
        let crowd = 600
        for index in 0...crowd {
            let ssrc = UInt32(20_000 + index)
            let uplinkKey = SRTPKey(bytes: (0..<30).map { UInt8(truncatingIfNeeded: index &+ $0 &* 7) })!
            forwarder.add(
                MediaPeer(
                    room: index < crowd ? "big" : "small", peer: "l\(index)", ssrc: ssrc, uplinkKey: uplinkKey,
                    gate: PublishGate(false), webSocketSink: { _ in }))
            let session = try SRTPSession(key: uplinkKey, direction: .outbound)
            let report = try session.protect(RTCPPacket.receiverReport(ssrc: ssrc, reports: []).bytes(), rtcp: true)
            ear.send(report, to: forwarder.socket.localAddress)
        }
        // Every report is answered: the ear reads the crowd's answers before the audio (10 s at most, for a
        // loaded machine).
        var buffer = [UInt8](repeating: 0, count: 1600)
        var answers = 0
        while answers < crowd + 1, ear.waitReadable(timeoutMilliseconds: 10_000) {
            if buffer.withUnsafeMutableBytes({ ear.receive(into: $0) }) != nil { answers += 1 }
        }
        #expect(answers == crowd + 1)
        #expect(forwarder.counters.value(.bindings) == 2 + crowd + 1)
        // Both packets wait in the forwarder's queue while it is stopped, and arrive in one batch.
        forwarder.stop()
        _ = try bigSpeaker.sendAudio(to: forwarder)
        _ = try smallSpeaker.sendAudio(to: forwarder)
        forwarder.start()
        var order: [UInt32] = []
        while order.count < crowd + 1, ear.waitReadable(timeoutMilliseconds: 1000) {
            guard let got = buffer.withUnsafeMutableBytes({ ear.receive(into: $0) }), got.length >= 12,
                !buffer.withUnsafeBytes({ RTCPPacket.isRTCP(UnsafeRawBufferPointer(rebasing: $0[..<got.length])) })
            else { continue }
            // SRTP leaves the RTP header in the clear: bytes 8-11 are the speaker's SSRC.
            order.append(
                UInt32(buffer[8]) << 24 | UInt32(buffer[9]) << 16 | UInt32(buffer[10]) << 8 | UInt32(buffer[11]))
        }
        #expect(order.count == crowd + 1)
        #expect(order.filter { $0 == 9001 }.count == crowd)
        #expect(order.firstIndex(of: 9002) == 0)
        #expect(crowd > 2 * FanOutQueue.turnSize)
    }

    /// A fan-out longer than `busyRunNanoseconds` lets threads waiting for the CPU run on the way; a forwarder
    /// with nothing to fan out never yields.
    @Test func aLongFanOutYieldsTheCPUOnTheWay() throws {
        // The crowd shares one socket and binds with one report each, without the consent round trip.
        let forwarder = try MediaForwarder(binding: .loopback(port: 0), bindsAtFirstPacket: true)
        forwarder.start()
        defer { forwarder.stop() }
        forwarder.setRoomKey(roomKey, epoch: 1, room: "big")
        let speaker = try TestPeer(ssrc: 9001, roomKey: roomKey, mayPublish: true)
        forwarder.add(speaker.media(room: "big"))
        #expect(try speaker.bind(to: forwarder))
        let ear = try UDPSocket(binding: .loopback(port: 0), bufferBytes: 8 << 20)
        let crowd = 2000
        for index in 0..<crowd {
            let ssrc = UInt32(20_000 + index)
            let uplinkKey = SRTPKey(bytes: (0..<30).map { UInt8(truncatingIfNeeded: index &+ $0 &* 7) })!
            forwarder.add(
                MediaPeer(
                    room: "big", peer: "l\(index)", ssrc: ssrc, uplinkKey: uplinkKey, gate: PublishGate(false),
                    webSocketSink: { _ in }))
            let session = try SRTPSession(key: uplinkKey, direction: .outbound)
            let report = try session.protect(RTCPPacket.receiverReport(ssrc: ssrc, reports: []).bytes(), rtcp: true)
            ear.send(report, to: forwarder.socket.localAddress)
            if index % 200 == 199 { usleep(5000) }
        }
        #expect(waitUntil(limit: 10) { forwarder.counters.value(.bindings) == 1 + crowd })
        #expect(forwarder.counters.value(.yields) == 0)
        _ = try speaker.sendAudio(to: forwarder)
        #expect(waitUntil(limit: 10) { forwarder.counters.value(.sentDatagrams) == crowd })
        // 2,000 datagrams take milliseconds (about 4 µs each on loopback), many times the busy run.
        #expect(forwarder.counters.value(.yields) >= 1)
        #expect(MediaForwarder.busyRunNanoseconds == 250_000)
    }

    /// A speaker's packets reach every listener in order, even when the room's listeners are listed again
    /// between two of them (someone joined) and a listener's place in the list changes.
    @Test func aSpeakersPacketsStayInOrderWhenTheListenersChangeBetweenThem() throws {
        let speaker = try TestPeer(ssrc: 11_001, roomKey: roomKey, mayPublish: true)
        let listeners = try (0..<200).map {
            try TestPeer(ssrc: UInt32(11_002 + $0), roomKey: roomKey, mayPublish: false)
        }
        // The late listener binds with its one report, in the batch between the packets.
        let forwarder = try makeRoom([speaker] + listeners, bindsAtFirstPacket: true)
        defer { forwarder.stop() }
        let late = try TestPeer(ssrc: 12_000, roomKey: roomKey, mayPublish: false)
        forwarder.add(late.media(room: "r"))
        usleep(50_000)
        // One batch: the first packet, the late listener's binding (which lists the room's listeners again),
        // the second packet.
        forwarder.stop()
        let first = try speaker.sendAudio(to: forwarder)
        let report = try late.uplink.protect(RTCPPacket.receiverReport(ssrc: 12_000, reports: []).bytes(), rtcp: true)
        late.socket.send(report, to: forwarder.socket.localAddress)
        let second = try speaker.sendAudio(to: forwarder)
        forwarder.start()
        #expect(waitUntil(limit: 1) { forwarder.counters.value(.sentDatagrams) == 200 + 201 })
        for listener in listeners {
            var heard: [[UInt8]] = []
            while heard.count < 2, let got = listener.receive() { heard.append(try listener.downlink.unprotect(got)) }
            #expect(heard == [first, second])
        }
        let answer = try #require(late.receive())
        #expect(try late.downlink.unprotect(answer, rtcp: true).count > 0)
        let got = try #require(late.receive())
        #expect(try late.downlink.unprotect(got) == second)
        #expect(late.receive(timeout: 100) == nil)
    }

    /// Whether this kernel keeps a thread's slice (Linux 6.12 on), asked on a thread of the test's own.
    static let kernelKeepsSlices: Bool = {
        let kept = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            kept.store(
                ThreadSlice.request(nanoseconds: 300_000) && ThreadSlice.current() == 300_000, ordering: .relaxed)
            done.signal()
        }
        thread.start()
        done.wait()
        return kept.load(ordering: .relaxed)
    }()

    @Test(.enabled(if: kernelKeepsSlices, "this kernel keeps no slice per thread (Linux 6.12 and later do)"))
    func theForwardingThreadAsksForShortSlices() throws {
        let forwarder = try MediaForwarder(binding: .loopback(port: 0))
        forwarder.start()
        defer { forwarder.stop() }
        #expect(waitUntil(limit: 1) { forwarder.forwardingThreadID != 0 })
        #expect(waitUntil(limit: 1) { ThreadSlice.current(thread: forwarder.forwardingThreadID) == 100_000 })
        #expect(MediaForwarder.threadSliceNanoseconds == 100_000)
    }

    /// The kernel shows the forwarding thread by its name (`ps -L`, `top -H`).
    @Test func theForwardingThreadCarriesItsNameInTheKernel() throws {
        let forwarder = try MediaForwarder(binding: .loopback(port: 0))
        forwarder.start()
        defer { forwarder.stop() }
        #expect(waitUntil(limit: 1) { forwarder.forwardingThreadID != 0 })
        let comm = try String(
            contentsOfFile: "/proc/self/task/\(forwarder.forwardingThreadID)/comm", encoding: .utf8)
        #expect(comm == "clubroom-fwd\n")
    }
}

/// What the forwarder measures of a peer from its reports (docs/media.md, "Network quality").
@Suite(.ownThread) struct ForwarderQualityTests {
    let roomKey = key(201)

    /// The server's answer to a report from `peer`: its sender report's SSRC and compact time.
    func senderReport(
        answering peer: TestPeer, blocks: [RTCPReportBlock], forwarder: MediaForwarder
    ) throws
        -> (ssrc: UInt32, time: UInt32)?
    {
        let report = try peer.uplink.protect(
            RTCPPacket.receiverReport(ssrc: peer.ssrc, reports: blocks).bytes(), rtcp: true)
        peer.socket.send(report, to: forwarder.socket.localAddress)
        guard let answer = peer.receive() else { return nil }
        for case .senderReport(let ssrc, let info, _) in try RTCPPacket.parseCompound(
            try peer.downlink.unprotect(answer, rtcp: true))
        {
            return (ssrc, UInt32(truncatingIfNeeded: info.ntpTimestamp >> 16))
        }
        return nil
    }

    /// The answer to a report from `peer` (with `extra` after it in the same compound packet), every packet of it.
    func answer(to peer: TestPeer, extra: [RTCPPacket] = [], forwarder: MediaForwarder) throws -> [RTCPPacket] {
        let bytes = RTCPPacket.receiverReport(ssrc: peer.ssrc, reports: []).bytes() + extra.flatMap { $0.bytes() }
        peer.socket.send(try peer.uplink.protect(bytes, rtcp: true), to: forwarder.socket.localAddress)
        let answer = try #require(peer.receive())
        return try RTCPPacket.parseCompound(try peer.downlink.unprotect(answer, rtcp: true))
    }

    /// The runs of loss listeners report for a speaker reach the speaker with its next report, all listeners
    /// together; runs said of a peer of another room, or of nobody, are left out, and a report with no loss
    /// since carries none.
    @Test func listenersRunsOfLossReachTheSpeakerTogether() throws {
        let forwarder = try MediaForwarder(binding: .loopback(port: 0))
        forwarder.start()
        defer { forwarder.stop() }
        forwarder.setRoomKey(roomKey, epoch: 1, room: "r")
        forwarder.setRoomKey(roomKey, epoch: 1, room: "other")
        let speaker = try TestPeer(ssrc: 22_002, roomKey: roomKey, mayPublish: true)
        let first = try TestPeer(ssrc: 22_004, roomKey: roomKey, mayPublish: false)
        let second = try TestPeer(ssrc: 22_006, roomKey: roomKey, mayPublish: false)
        let elsewhere = try TestPeer(ssrc: 22_008, roomKey: roomKey, mayPublish: true)
        for peer in [speaker, first, second] { forwarder.add(peer.media(room: "r")) }
        forwarder.add(elsewhere.media(room: "other"))
        for peer in [speaker, first, second, elsewhere] { #expect(try peer.bind(to: forwarder)) }

        _ = try answer(
            to: first,
            extra: [
                .lossRuns(
                    ssrc: first.ssrc,
                    entries: [
                        RTCPLossRuns(ssrc: speaker.ssrc, runs: 2, lost: 6),
                        RTCPLossRuns(ssrc: elsewhere.ssrc, runs: 9, lost: 9),
                        RTCPLossRuns(ssrc: 77, runs: 1, lost: 1),
                    ])
            ], forwarder: forwarder)
        _ = try answer(
            to: second,
            extra: [.lossRuns(ssrc: second.ssrc, entries: [RTCPLossRuns(ssrc: speaker.ssrc, runs: 1, lost: 3)])],
            forwarder: forwarder)
        let toSpeaker = try answer(to: speaker, forwarder: forwarder)
        #expect(
            toSpeaker.dropFirst().first
                == .lossRuns(ssrc: forwarder.serverSSRC, entries: [RTCPLossRuns(ssrc: speaker.ssrc, runs: 3, lost: 9)]))
        let toOther = try answer(to: elsewhere, forwarder: forwarder)
        #expect(toOther.count == 1)
        let again = try answer(to: speaker, forwarder: forwarder)
        #expect(again.count == 1)
    }

    @Test func aListenersReportsGiveItsLossAndRoundTrip() throws {
        let measured = Mutex<[String: LinkMeasures]>([:])
        let forwarder = try MediaForwarder(
            binding: .loopback(port: 0),
            onQuality: { _, list in measured.withLock { for entry in list { $0[entry.peer] = entry.measures } } })
        forwarder.start()
        defer { forwarder.stop() }
        forwarder.setRoomKey(roomKey, epoch: 1, room: "r")
        let speaker = try TestPeer(ssrc: 21_001, roomKey: roomKey, mayPublish: true)
        let listener = try TestPeer(ssrc: 21_002, roomKey: roomKey, mayPublish: false)
        for peer in [speaker, listener] { forwarder.add(peer.media(room: "r")) }
        for peer in [speaker, listener] { #expect(try peer.bind(to: forwarder)) }
        let server = try #require(try senderReport(answering: listener, blocks: [], forwarder: forwarder))
        #expect(server.ssrc == forwarder.serverSSRC)
        // Held 300 ms and sent back claiming no delay: the round trip is at least those 300 ms. A quarter of the
        // speaker's packets lost on the way to the listener (64 of 256).
        usleep(300_000)
        let blocks = [
            RTCPReportBlock(
                ssrc: server.ssrc, fractionLost: 0, cumulativeLost: 0, extendedHighestSequence: 0, jitter: 0,
                lastSenderReport: server.time, delaySinceLastSenderReport: 0),
            RTCPReportBlock(
                ssrc: speaker.ssrc, fractionLost: 64, cumulativeLost: 10, extendedHighestSequence: 40, jitter: 480,
                lastSenderReport: 0, delaySinceLastSenderReport: 0),
        ]
        #expect(try senderReport(answering: listener, blocks: blocks, forwarder: forwarder) != nil)
        #expect(waitUntil(limit: 2) { measured.withLock { $0["p21002"]?.rttMilliseconds ?? 0 } >= 300 })
        let listenerMeasures = try #require(measured.withLock { $0["p21002"] })
        #expect(listenerMeasures.lossPercent == 25)
        #expect(listenerMeasures.jitterMilliseconds == 10)
        #expect(listenerMeasures.hasMedia)
        #expect(listenerMeasures.score == 1)
    }
}
