import Foundation
import MediaServer
import MediaTransport
import MediaWire
import RoomTesting
import Synchronization
import Testing

@testable import MediaRelay

func key(_ seed: UInt8) -> SRTPKey { SRTPKey(bytes: (0..<30).map { seed &+ UInt8($0) })! }

/// A client of one node: its socket on that node's address, its uplink session and the node's room key.
final class Client {
    let ssrc: UInt32
    let socket: UDPSocket
    let uplink: SRTPSession
    let downlink: SRTPSession
    let gate: PublishGate
    var sequence: UInt16 = 0

    init(ssrc: UInt32, host: String, roomKey: SRTPKey, mayPublish: Bool) throws {
        self.ssrc = ssrc
        socket = try UDPSocket(binding: UDPAddress(host: host, port: 0)!)
        uplink = try SRTPSession(key: key(UInt8(truncatingIfNeeded: ssrc)), direction: .outbound)
        downlink = try SRTPSession(key: roomKey, direction: .inbound)
        gate = PublishGate(mayPublish)
    }

    func media(room: String) -> MediaPeer {
        MediaPeer(
            room: room, peer: "p\(ssrc)", ssrc: ssrc, uplinkKey: key(UInt8(truncatingIfNeeded: ssrc)), gate: gate,
            webSocketSink: { _ in })
    }

    /// Binds this client's address at the forwarder with an SRTCP report, answers the consent nonce and waits for
    /// the answer.
    func bind(to forwarder: MediaForwarder) throws -> Bool {
        let report = try uplink.protect(RTCPPacket.receiverReport(ssrc: ssrc, reports: []).bytes(), rtcp: true)
        socket.send(report, to: forwarder.socket.localAddress)
        guard let challenge = receive() else { return false }
        var nonce: [UInt8]?
        for case .consent(_, let sent) in try RTCPPacket.parseCompound(try downlink.unprotect(challenge, rtcp: true)) {
            nonce = sent
        }
        guard let nonce else { return false }
        let answer = try uplink.protect(
            RTCPPacket.receiverReport(ssrc: ssrc, reports: []).bytes()
                + RTCPPacket.consent(ssrc: ssrc, nonce: nonce).bytes(), rtcp: true)
        socket.send(answer, to: forwarder.socket.localAddress)
        return receive() != nil
    }

    func send(to forwarder: MediaForwarder) throws -> [UInt8] {
        sequence &+= 1
        let packet = RTPHeader(
            payloadType: 111, sequenceNumber: sequence, timestamp: UInt32(sequence) * 960, ssrc: ssrc
        )
        .packet(payload: [9, 8, 7, UInt8(truncatingIfNeeded: sequence)])
        socket.send(try uplink.protect(packet), to: forwarder.socket.localAddress)
        return packet
    }

    func receive(timeout: Int32 = 1000) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 1600)
        guard socket.waitReadable(timeoutMilliseconds: timeout) else { return nil }
        guard let got = buffer.withUnsafeMutableBytes({ socket.receive(into: $0) }) else { return nil }
        return Array(buffer[..<got.length])
    }
}

/// The lines a relay logged.
final class LogLines: Sendable {
    private let stored = Mutex<[String]>([])
    func append(_ line: String) { stored.withLock { $0.append(line) } }
    var lines: [String] { stored.withLock { $0 } }
}

/// One node: a forwarder and a relay on its own loopback address, with a room key of its own.
final class Node {
    let name: String
    let incarnation: UInt64
    let forwarder: MediaForwarder
    let relay: MediaRelay
    let roomKey: SRTPKey
    let host: String
    let log = LogLines()

    init(_ name: String, host: String, incarnation: UInt64, secret: [UInt8], keySeed: UInt8) throws {
        self.name = name
        self.host = host
        self.incarnation = incarnation
        roomKey = key(keySeed)
        forwarder = try MediaForwarder(binding: UDPAddress(host: host, port: 0)!)
        let log = self.log
        relay = try MediaRelay(
            node: name, incarnation: incarnation, secret: secret, binding: UDPAddress(host: host, port: 0)!,
            forwarder: forwarder, log: { line in log.append(line) })
        forwarder.start()
        relay.start()
        forwarder.setRoomKey(roomKey, epoch: 1, room: "r")
    }

    var relayNode: RelayNode { relay.asRemoteNode }

    func client(_ ssrc: UInt32, mayPublish: Bool = false) throws -> Client {
        let client = try Client(ssrc: ssrc, host: host, roomKey: roomKey, mayPublish: mayPublish)
        forwarder.add(client.media(room: "r"))
        #expect(try client.bind(to: forwarder))
        return client
    }

    func stop() {
        relay.stop()
        forwarder.stop()
    }
}

/// Whether this machine routes 127.0.0.2 and 127.0.0.3 (Linux does, for all of 127.0.0.0/8).
let loopbackAliases = (try? UDPSocket(binding: UDPAddress(host: "127.0.0.3", port: 0)!)) != nil

@Suite(.ownThread, .serialized, .enabled(if: loopbackAliases, "127.0.0.2 and 127.0.0.3 do not bind here"))
struct MediaRelayTests {
    let secret = Array("the cluster's shared secret".utf8)

    /// Node A (127.0.0.2) with a speaker and a listener; node B (127.0.0.3) with three listeners.
    func twoNodes(secretOfB: [UInt8]? = nil) throws -> (Node, Node, Client, Client, [Client], PublishGate) {
        let a = try Node("a", host: "127.0.0.2", incarnation: 100, secret: secret, keySeed: 10)
        let b = try Node("b", host: "127.0.0.3", incarnation: 200, secret: secretOfB ?? secret, keySeed: 20)
        let speaker = try a.client(SSRCSpace.ssrc(slot: 1, random: 0x101), mayPublish: true)
        let localListener = try a.client(SSRCSpace.ssrc(slot: 1, random: 0x102))
        let remoteListeners = try (0..<3).map { try b.client(SSRCSpace.ssrc(slot: 2, random: 0x200 + UInt32($0))) }
        a.relay.setRemoteNodes([a.relayNode, b.relayNode], room: "r")
        b.relay.setRemoteNodes([a.relayNode, b.relayNode], room: "r")
        let gateOnB = PublishGate(true)
        b.relay.addRemoteSpeaker(ssrc: speaker.ssrc, room: "r", node: "a", gate: gateOnB)
        return (a, b, speaker, localListener, remoteListeners, gateOnB)
    }

    @Test func aNodeIsReadFromTheRelayAddressTheClusterPublishes() throws {
        #expect(
            RelayNode(name: "a", incarnation: 7, relayAddress: "127.0.0.2:7481")
                == RelayNode(name: "a", incarnation: 7, address: UDPAddress(host: "127.0.0.2", port: 7481)!))
        // A node without a relay publishes no address.
        #expect(RelayNode(name: "a", incarnation: 7, relayAddress: "") == nil)
        let a = try Node("a", host: "127.0.0.2", incarnation: 100, secret: secret, keySeed: 10)
        defer { a.stop() }
        #expect(
            RelayNode(name: "a", incarnation: 100, relayAddress: "\(a.relay.socket.localAddress)") == a.relayNode)
    }

    @Test func aSpeakersPacketsCrossOncePerRemoteNodeAndReachEveryListenerThere() throws {
        let (a, b, speaker, local, remote, _) = try twoNodes()
        defer {
            a.stop()
            b.stop()
        }
        let sent = try (0..<5).map { _ in try speaker.send(to: a.forwarder) }
        for listener in remote {
            var heard: [[UInt8]] = []
            while heard.count < 5, let got = listener.receive() { heard.append(try listener.downlink.unprotect(got)) }
            #expect(heard == sent)
            #expect(listener.receive(timeout: 50) == nil)
        }
        var heardLocally: [[UInt8]] = []
        while heardLocally.count < 5, let got = local.receive() {
            heardLocally.append(try local.downlink.unprotect(got))
        }
        #expect(heardLocally == sent)
        // Five packets crossed once each, though B has three listeners.
        #expect(a.relay.counters.value(.sent) == 5)
        #expect(b.relay.counters.value(.delivered) == 5)
        #expect(b.forwarder.counters.value(.sentDatagrams) == 15)
        #expect(speaker.receive(timeout: 50) == nil)
    }

    /// Node B fans its own speaker's packets out to 200 listeners while node A relays another speaker's to it:
    /// every listener hears every packet of each speaker once, intact and in each speaker's order.
    @Test func aLargeFanOutWithRelayedPacketsArrivingMeanwhileGetsEachPacketToEveryoneOnceInOrder() throws {
        let a = try Node("a", host: "127.0.0.2", incarnation: 100, secret: secret, keySeed: 10)
        let b = try Node("b", host: "127.0.0.3", incarnation: 200, secret: secret, keySeed: 20)
        defer {
            a.stop()
            b.stop()
        }
        let remoteSpeaker = try a.client(SSRCSpace.ssrc(slot: 1, random: 0x101), mayPublish: true)
        let localSpeaker = try b.client(SSRCSpace.ssrc(slot: 2, random: 0x102), mayPublish: true)
        let listeners = try (0..<200).map { try b.client(SSRCSpace.ssrc(slot: 2, random: 0x200 + UInt32($0))) }
        a.relay.setRemoteNodes([a.relayNode, b.relayNode], room: "r")
        b.relay.setRemoteNodes([a.relayNode, b.relayNode], room: "r")
        b.relay.addRemoteSpeaker(ssrc: remoteSpeaker.ssrc, room: "r", node: "a", gate: PublishGate(true))
        let rounds = 20
        var sent: [UInt32: [[UInt8]]] = [:]
        for _ in 0..<rounds {
            sent[localSpeaker.ssrc, default: []].append(try localSpeaker.send(to: b.forwarder))
            sent[remoteSpeaker.ssrc, default: []].append(try remoteSpeaker.send(to: a.forwarder))
            usleep(2000)
        }
        for listener in listeners {
            var heard: [UInt32: [[UInt8]]] = [:]
            var count = 0
            while count < 2 * rounds, let got = listener.receive() {
                let plain = try listener.downlink.unprotect(got)
                let ssrc = UInt32(plain[8]) << 24 | UInt32(plain[9]) << 16 | UInt32(plain[10]) << 8 | UInt32(plain[11])
                heard[ssrc, default: []].append(plain)
                count += 1
            }
            #expect(heard == sent)
        }
        // And nothing more.
        usleep(50_000)
        #expect(listeners.allSatisfy { $0.receive(timeout: 0) == nil })
        #expect(b.relay.counters.value(.delivered) == rounds)
        // The local speaker's packets to the 200 listeners, the relayed ones to them and to the local speaker.
        #expect(b.forwarder.counters.value(.sentDatagrams) == rounds * 200 + rounds * 201)
    }

    @Test func theReceivingNodesOwnGateCutsARemoteSpeakerOff() throws {
        let (a, b, speaker, local, remote, gateOnB) = try twoNodes()
        defer {
            a.stop()
            b.stop()
        }
        gateOnB.set(false)
        _ = try speaker.send(to: a.forwarder)
        #expect(local.receive() != nil)
        #expect(waitUntil(limit: 2) { b.relay.counters.value(.notPermitted) == 1 })
        #expect(remote.allSatisfy { $0.receive(timeout: 50) == nil })
        gateOnB.set(true)
        _ = try speaker.send(to: a.forwarder)
        #expect(remote.allSatisfy { $0.receive() != nil })
    }

    @Test func nodesWithDifferentClusterSecretsRefuseEachOthersMediaAndSaySo() throws {
        let (a, b, speaker, _, remote, _) = try twoNodes(secretOfB: Array("another cluster".utf8))
        defer {
            a.stop()
            b.stop()
        }
        for _ in 0..<3 { _ = try speaker.send(to: a.forwarder) }
        #expect(waitUntil(limit: 2) { b.relay.counters.value(.authenticationFailed) == 3 })
        #expect(remote.allSatisfy { $0.receive(timeout: 50) == nil })
        #expect(b.relay.counters.value(.delivered) == 0)
        // One line, not one per packet.
        #expect(
            b.log.lines == [
                "relay: refused media from node a at \(a.relay.socket.localAddress) for room r: it does not "
                    + "authenticate under this cluster's secret (the nodes' cluster secrets differ)"
            ])
    }

    @Test func packetsFromElsewhereThanTheSpeakersNodeAreRefusedBeforeAnyCrypto() throws {
        let (a, b, speaker, _, remote, _) = try twoNodes()
        defer {
            a.stop()
            b.stop()
        }
        let intruder = try UDPSocket(binding: UDPAddress(host: "127.0.0.4", port: 0)!)
        let packet = RTPHeader(payloadType: 111, sequenceNumber: 1, timestamp: 0, ssrc: speaker.ssrc).packet(payload: [
            1
        ])
        intruder.send(packet + [UInt8](repeating: 0, count: 10), to: b.relay.socket.localAddress)
        intruder.send([1, 2, 3], to: b.relay.socket.localAddress)
        let stranger = RTPHeader(payloadType: 111, sequenceNumber: 1, timestamp: 0, ssrc: 0x0900_0001).packet(payload: [
            1
        ])
        // With a session number after it, as relayed packets carry.
        intruder.send(stranger + [0, 0, 0, 0, 0, 0, 0, 1], to: b.relay.socket.localAddress)
        #expect(
            waitUntil(limit: 2) {
                b.relay.counters.value(.wrongSource) == 1 && b.relay.counters.value(.malformed) == 1
                    && b.relay.counters.value(.unknownSSRC) == 1
            })
        #expect(remote.allSatisfy { $0.receive(timeout: 50) == nil })
    }

    @Test func aRestartedNodesNewIncarnationNeedsItsNewKey() throws {
        let (a, b, speaker, _, remote, _) = try twoNodes()
        defer {
            a.stop()
            b.stop()
        }
        // B still believes A is incarnation 99: A's packets do not authenticate under that key.
        var stale = a.relayNode
        stale.incarnation = 99
        b.relay.setRemoteNodes([stale, b.relayNode], room: "r")
        _ = try speaker.send(to: a.forwarder)
        #expect(waitUntil(limit: 2) { b.relay.counters.value(.authenticationFailed) == 1 })
        b.relay.setRemoteNodes([a.relayNode, b.relayNode], room: "r")
        _ = try speaker.send(to: a.forwarder)
        #expect(remote.allSatisfy { $0.receive() != nil })
    }

    /// The answer to one SRTCP report of `client`: the loss fraction the node reports back for it.
    func reportedLoss(of client: Client, at node: Node) throws -> UInt8? {
        let report = try client.uplink.protect(
            RTCPPacket.receiverReport(ssrc: client.ssrc, reports: []).bytes(), rtcp: true)
        client.socket.send(report, to: node.forwarder.socket.localAddress)
        guard let answer = client.receive() else { return nil }
        let plain = try client.downlink.unprotect(answer, rtcp: true)
        // The server answers with a sender report (for the round trip), its block about this client first.
        guard case .senderReport(_, _, let blocks) = try RTCPPacket.parseCompound(plain).first else { return nil }
        return blocks.first?.fractionLost
    }

    @Test func keepalivesCarryTheWorstLossOfAnotherNodesListenersToTheSpeakersReports() throws {
        let (a, b, speaker, _, remote, _) = try twoNodes()
        defer {
            a.stop()
            b.stop()
        }
        #expect(try reportedLoss(of: speaker, at: a) == 0)
        // Two listeners on B report on the speaker (of A): 10% and 25% lost; the worst reaches A.
        for (listener, fraction) in zip(remote, [UInt8(26), 64]) {
            let block = RTCPReportBlock(
                ssrc: speaker.ssrc, fractionLost: fraction, cumulativeLost: Int32(fraction), extendedHighestSequence: 9,
                jitter: 0, lastSenderReport: 0, delaySinceLastSenderReport: 0)
            let report = try listener.uplink.protect(
                RTCPPacket.receiverReport(ssrc: listener.ssrc, reports: [block]).bytes(), rtcp: true)
            listener.socket.send(report, to: b.forwarder.socket.localAddress)
            #expect(listener.receive() != nil)
        }
        var heard: [UInt8] = []
        let deadline = uptimeMilliseconds() + 3000
        while uptimeMilliseconds() < deadline, heard.last != 64 {
            usleep(100_000)
            if let loss = try reportedLoss(of: speaker, at: a), loss != 0 { heard.append(loss) }
        }
        // Once, in the one report after the keepalive: the next keepalive has nothing new from B's listeners.
        #expect(heard == [64])
        // B counts a keepalive once its send returned, which may be after A has read it.
        let counted = uptimeMilliseconds() + 2000
        while b.relay.counters.value(.keepaliveSent) == 0, uptimeMilliseconds() < counted { usleep(10_000) }
        #expect(b.relay.counters.value(.keepaliveSent) >= 1)
        #expect(a.relay.counters.value(.keepaliveReceived) >= 1)
        #expect(a.relay.counters.value(.keepaliveRefused) == 0)
        #expect(b.relay.counters.value(.keepaliveRefused) == 0)
        usleep(1_200_000)
        #expect(try reportedLoss(of: speaker, at: a) == 0)
    }

    @Test func keepalivesUnderAnotherClusterSecretAreRefusedAndLoggedOnce() throws {
        let (a, b, _, _, _, _) = try twoNodes(secretOfB: Array("another cluster".utf8))
        defer {
            a.stop()
            b.stop()
        }
        #expect(waitUntil(limit: 3) { b.relay.counters.value(.keepaliveRefused) >= 2 })
        #expect(a.relay.counters.value(.keepaliveRefused) >= 1)
        #expect(a.relay.counters.value(.keepaliveReceived) == 0)
        #expect(b.relay.counters.value(.keepaliveReceived) == 0)
        let line =
            "relay: refused media from node a at \(a.relay.socket.localAddress) for room r: it does not "
            + "authenticate under this cluster's secret (the nodes' cluster secrets differ)"
        #expect(b.log.lines == [line])
    }

    @Test func aRoomIsSilentOnceEveryOtherNodeOfItStoppedSendingAndNotBefore() throws {
        let (a, b, _, _, _, _) = try twoNodes()
        defer {
            a.stop()
            b.stop()
        }
        func silent(_ node: Node) -> [String] {
            node.relay.silentRooms(forMilliseconds: 1500).map { "\($0.room): \($0.nodes.joined(separator: ","))" }
        }
        // A room with no other node is never silent.
        b.relay.setRemoteNodes([b.relayNode], room: "alone")
        usleep(2_500_000)
        // Keepalives flow both ways, every second.
        #expect(silent(a) == [])
        #expect(silent(b) == [])
        #expect(a.relay.counters.value(.keepaliveReceived) >= 2)
        #expect(b.relay.counters.value(.keepaliveReceived) >= 2)
        a.relay.stop()
        let stoppedAt = uptimeMilliseconds()
        #expect(waitUntil(limit: 4) { silent(b) == ["r: a"] })
        let after = uptimeMilliseconds() - stoppedAt
        // Silent from A's last keepalive on: between 0.5 and 1.5 s after A stopped, give or take a loop turn.
        #expect(after >= 400 && after <= 2500)
        // A node that joins the room gets the same grace before it counts as silent.
        var c = a.relayNode
        c.name = "c"
        b.relay.setRemoteNodes([a.relayNode, b.relayNode, c], room: "r")
        #expect(silent(b) == [])
    }

    /// The edge node B's last listener leaves (B stops relaying the room) and another joins (B relays it again):
    /// B starts a new session under a new key, and A follows it: B's keepalives go on being accepted, and A does
    /// not take the room for silent (which would drop its clients).
    @Test func aNodeThatStopsAndStartsRelayingARoomStartsANewSessionTheOtherNodeFollows() throws {
        let (a, b, _, _, _, _) = try twoNodes()
        defer {
            a.stop()
            b.stop()
        }
        #expect(waitUntil(limit: 3) { a.relay.counters.value(.keepaliveReceived) >= 2 })
        b.relay.setRemoteNodes([b.relayNode], room: "r")
        b.relay.setRemoteNodes([a.relayNode, b.relayNode], room: "r")
        let before = a.relay.counters.value(.keepaliveReceived)
        #expect(waitUntil(limit: 4) { a.relay.counters.value(.keepaliveReceived) >= before + 2 })
        #expect(a.relay.counters.value(.keepaliveRefused) == 0)
        #expect(a.relay.counters.value(.replayed) == 0)
        #expect(a.relay.silentRooms(forMilliseconds: 1500) == [])
    }

    /// A listener's report on a speaker of another node of the room is that speaker's loss to carry back, and
    /// counts towards the listener's own downlink (the forwarder's network quality); one on an SSRC that is no
    /// remote speaker of the listener's room is neither.
    @Test func aReportOnARemoteSpeakerOfTheRoomIsTheListenersDownlinkToo() throws {
        let a = try Node("a", host: "127.0.0.2", incarnation: 100, secret: secret, keySeed: 10)
        defer { a.stop() }
        let remote = SSRCSpace.ssrc(slot: 2, random: 0x201)
        a.relay.addRemoteSpeaker(ssrc: remote, room: "r", node: "b", gate: PublishGate(true))
        func block(_ ssrc: UInt32) -> RTCPReportBlock {
            RTCPReportBlock(ssrc: ssrc, fractionLost: 64, cumulativeLost: 5, extendedHighestSequence: 9, jitter: 0)
        }
        #expect(a.relay.listenerLoss(block(remote), room: "r"))
        #expect(a.relay.listenerLoss(block(remote), room: "r"))
        #expect(!a.relay.listenerLoss(block(remote), room: "q"))
        #expect(!a.relay.listenerLoss(block(SSRCSpace.ssrc(slot: 2, random: 0x202)), room: "r"))
    }

    @Test func relayKeysDifferPerRoomNodeIncarnationAndSecret() {
        let base = RelayKeys.key(secret: secret, room: "r", node: "a", incarnation: 1, session: 1)
        #expect(base == RelayKeys.key(secret: secret, room: "r", node: "a", incarnation: 1, session: 1))
        #expect(base != RelayKeys.key(secret: secret, room: "s", node: "a", incarnation: 1, session: 1))
        #expect(base != RelayKeys.key(secret: secret, room: "r", node: "b", incarnation: 1, session: 1))
        #expect(base != RelayKeys.key(secret: secret, room: "r", node: "a", incarnation: 2, session: 1))
        #expect(base != RelayKeys.key(secret: [1], room: "r", node: "a", incarnation: 1, session: 1))
        // A node's sessions of one room never share a key.
        let sessions = Set(
            (1...100).map { RelayKeys.key(secret: secret, room: "r", node: "a", incarnation: 1, session: $0).bytes })
        #expect(sessions.count == 100)
        #expect(SSRCSpace.slot(of: SSRCSpace.ssrc(slot: 7, random: 0xFFFF_FFFF)) == 7)
        #expect(SSRCSpace.ssrc(slot: 7, random: 0xFFFF_FFFF) == 0x07FF_FFFF)
        #expect(RelayKeys.roomTag(room: "r") == RelayKeys.roomTag(room: "r"))
        #expect(RelayKeys.roomTag(room: "r") != RelayKeys.roomTag(room: "s"))
    }
}

/// Milliseconds on a clock that only goes forward.
func uptimeMilliseconds() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000) }
