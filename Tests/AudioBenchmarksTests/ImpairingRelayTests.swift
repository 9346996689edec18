import Dispatch
import MediaTransport
import MediaWire
import Testing

@testable import AudioBenchmarks

/// The bytes of an RTP header (no extension) with `sequence`, `timestamp` and `ssrc`, and a few payload bytes.
func rtp(sequence: UInt16, timestamp: UInt32 = 0, ssrc: UInt32 = 0x1234_5678) -> [UInt8] {
    RTPHeader(payloadType: 111, sequenceNumber: sequence, timestamp: timestamp, ssrc: ssrc)
        .packet(extensionElements: [], payload: [1, 2, 3, 4])
}

@Suite struct RelayImpairmentTests {
    static let link = LinkImpairment(lossPercent: 10, baseDelayMilliseconds: 0, jitterMilliseconds: 40, seed: 7)

    func decisions(_ packets: [[UInt8]], link: LinkImpairment = Self.link) -> [RelayImpairment.Decision] {
        var impairment = RelayImpairment(link: link)
        return packets.map { packet in packet.withUnsafeBytes { impairment.decide($0) } }
    }

    @Test func aSeedDropsTheSamePacketsByTheirPlaceInTheStream() {
        // Sequence numbers that wrap past 65535: the place in the stream counts on across the wrap.
        let packets = (0..<300).map { rtp(sequence: UInt16(truncatingIfNeeded: 65_400 + $0)) }
        let dropped = decisions(packets).enumerated().filter { $0.element == .drop }.map(\.offset)
        #expect(dropped == (0..<300).filter { Self.link.isLost(frame: $0) })
        #expect(dropped.prefix(8) == [8, 18, 19, 33, 46, 67, 84, 87])
        #expect(dropped.count == 33)
        #expect(decisions(packets).map { $0 == .drop } == decisions(packets).map { $0 == .drop })
    }

    @Test func anotherSeedDropsOtherPackets() {
        var other = Self.link
        other.seed = 8
        let packets = (0..<300).map { rtp(sequence: UInt16($0)) }
        #expect(decisions(packets, link: other) != decisions(packets))
    }

    @Test func delaysStayWithinTheJitter() {
        let packets = (0..<1_000).map { rtp(sequence: UInt16($0)) }
        var delays: [Int64] = []
        for case .deliver(let delay) in decisions(packets) { delays.append(delay) }
        #expect(delays.count == 1_000 - decisions(packets).filter { $0 == .drop }.count)
        #expect(delays.allSatisfy { (0...40_000).contains($0) })
        // Spread over the whole range, not stuck at one value.
        #expect(delays.min()! < 2_000 && delays.max()! > 38_000)
    }

    @Test func aReorderedPacketKeepsItsPlace() {
        // 0, 2, 1, 3: the late packet 1 is decided as the stream's second packet.
        var impairment = RelayImpairment(link: Self.link)
        for sequence: UInt16 in [100, 102, 101, 103] {
            _ = rtp(sequence: sequence).withUnsafeBytes { impairment.decide($0) }
        }
        #expect(impairment.records.map(\.index) == [0, 2, 1, 3])
    }

    @Test func rtcpAndStrangeDatagramsPassAtOnce() {
        let report = RTCPPacket.receiverReport(ssrc: 9, reports: []).bytes()
        let lossy = LinkImpairment(lossPercent: 100, baseDelayMilliseconds: 5, jitterMilliseconds: 40, seed: 1)
        #expect(
            decisions([report, [0xFF, 1, 2], []], link: lossy)
                == Array(repeating: .deliver(afterMicroseconds: 0), count: 3))
        #expect(decisions([rtp(sequence: 1)], link: lossy) == [.drop])
    }

    @Test func eachStreamCountsFromItsOwnFirstPacket() {
        var impairment = RelayImpairment(link: Self.link)
        for (sequence, ssrc): (UInt16, UInt32) in [(500, 1), (9_000, 2), (501, 1), (9_001, 2)] {
            _ = rtp(sequence: sequence, ssrc: ssrc).withUnsafeBytes { impairment.decide($0) }
        }
        #expect(impairment.records.map(\.index) == [0, 0, 1, 1])
    }
}

@Suite struct ImpairingRelayTests {
    /// Waits up to 5 s for datagrams on `socket`, returning them as they came.
    func receive(_ count: Int, on socket: UDPSocket) -> [(bytes: [UInt8], from: UDPAddress)] {
        var got: [(bytes: [UInt8], from: UDPAddress)] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
        defer { buffer.deallocate() }
        let deadline = DispatchTime.now().uptimeNanoseconds + 5_000_000_000
        while got.count < count, DispatchTime.now().uptimeNanoseconds < deadline {
            guard socket.waitReadable(timeoutMilliseconds: 100) else { continue }
            while let datagram = socket.receive(into: buffer) {
                got.append((Array(buffer[0..<datagram.length]), datagram.from))
            }
        }
        return got
    }

    @Test func carriesTheClientsDatagramsAndTheServersSurvivors() throws {
        let server = try UDPSocket(binding: .loopback(port: 0))
        let client = try UDPSocket(binding: .loopback(port: 0))
        let link = LinkImpairment(lossPercent: 20, baseDelayMilliseconds: 0, jitterMilliseconds: 10, seed: 3)
        let relay = try ImpairingRelay(server: server.localAddress, link: link)
        relay.start()
        defer { relay.stop() }

        // The client's datagram reaches the server unharmed, from the relay's address.
        client.send([7, 7, 7], to: relay.address)
        let up = receive(1, on: server)
        #expect(up.map(\.bytes) == [[7, 7, 7]])
        let relayFromServerSide = try #require(up.first?.from)

        // The server's packets reach the client but for the seed's losses.
        let sent = (0..<100).map { rtp(sequence: UInt16(1_000 + $0)) }
        for packet in sent { server.send(packet, to: relayFromServerSide) }
        let survivors = (0..<100).filter { !link.isLost(frame: $0) }
        let down = receive(survivors.count, on: client)
        let sequences = down.map { Int($0.bytes[2]) << 8 | Int($0.bytes[3]) }
        #expect(Set(sequences) == Set(survivors.map { 1_000 + $0 }))
        #expect(sequences.count == survivors.count)
        #expect(relay.records.count == 100)
        #expect(
            relay.records.filter { $0.decision == .drop }.map(\.index) == (0..<100).filter { link.isLost(frame: $0) })
    }
}
