import Foundation
import MediaTransport
import MediaWire
import Platform
import RoomProtocol
import RoomTesting
import Testing

@testable import ClientAudio

/// Whether this machine routes 127.0.0.5 (Linux does, for all of 127.0.0.0/8).
let otherLoopback = (try? UDPSocket(binding: UDPAddress(host: "127.0.0.5", port: 0)!)) != nil

/// A client's media path against a stand-in server: a socket on 127.0.0.1 that holds the room key.
@Suite(.ownThread, .serialized, .enabled(if: otherLoopback, "127.0.0.5 does not bind here")) struct MediaSourceTests {
    let roomKey = (0..<30).map { UInt8($0) &+ 40 }
    let sendKey = (0..<30).map { UInt8($0) &+ 90 }

    func path(server: UDPSocket) throws -> MediaPath {
        let offer = MediaOffer(
            host: "127.0.0.1", port: Int(server.localAddress.port), ssrc: 0x0100_0001, serverSSRC: 0x0100_0002,
            sendKey: sendKey, roomKey: roomKey, epoch: 1)
        return try MediaPath(offer: offer, blockUDP: false, probeTimeout: .seconds(30), channel: .none) { _ in }
    }

    /// The sequence numbers of the RTP packets `path` opens within about a second.
    func heard(_ path: MediaPath, until last: UInt16) -> [UInt16] {
        var sequences: [UInt16] = []
        for _ in 0..<200 where !sequences.contains(last) {
            path.receive { incoming in
                if case .rtp(let packet, _) = incoming { sequences.append(UInt16(packet[2]) << 8 | UInt16(packet[3])) }
            }
            usleep(5_000)
        }
        return sequences
    }

    /// A member of the room (who holds the room key) sends forged media straight to a listener's UDP port from
    /// another address: it is not played; the server's packets are.
    @Test func forgedMediaFromAnotherAddressIsNotPlayed() throws {
        let server = try UDPSocket(binding: UDPAddress(host: "127.0.0.1", port: 0)!)
        let path = try path(server: server)
        // The client's probe tells the stand-in server (and the forger) where the client listens.
        path.maintain(now: MonotonicClock.microseconds()) { ([], []) }
        #expect(server.waitReadable(timeoutMilliseconds: 2000))
        var buffer = [UInt8](repeating: 0, count: 2048)
        guard let probe = buffer.withUnsafeMutableBytes({ server.receive(into: $0) }) else {
            Issue.record("no probe from the client")
            return
        }
        let client = probe.from
        let roomKey = SRTPKey(bytes: roomKey)!
        let downlink = try SRTPSession(key: roomKey, direction: .outbound)
        func packet(_ sequence: UInt16, ssrc: UInt32) throws -> [UInt8] {
            try downlink.protect(
                RTPHeader(
                    payloadType: RTPAudioProfile.opusPayloadType, sequenceNumber: sequence,
                    timestamp: UInt32(sequence) * 960, ssrc: ssrc
                )
                .packet(payload: [1, 2, 3, 4]))
        }
        // From 127.0.0.5 and from another port of the server's own address: both are someone else.
        let forgers = [
            try UDPSocket(binding: UDPAddress(host: "127.0.0.5", port: 0)!),
            try UDPSocket(binding: UDPAddress(host: "127.0.0.1", port: 0)!),
        ]
        for (index, forger) in forgers.enumerated() {
            forger.send(try packet(UInt16(10 + index), ssrc: 0x0200_0001), to: client)
        }
        server.send(try packet(20, ssrc: 0x0300_0001), to: client)
        #expect(heard(path, until: 20) == [20])
    }

    /// The server's sender report comes back in the client's next report (RFC 3550 §6.4.1): a block about the
    /// server's SSRC with the report's time (LSR) and how long the client held it (DLSR), from which the server
    /// measures the round trip.
    @Test func theServersSenderReportTimeIsCarriedBack() throws {
        let server = try UDPSocket(binding: UDPAddress(host: "127.0.0.1", port: 0)!)
        let path = try path(server: server)
        path.maintain(now: MonotonicClock.microseconds()) { ([], []) }
        var buffer = [UInt8](repeating: 0, count: 2048)
        #expect(server.waitReadable(timeoutMilliseconds: 2000))
        let probe = try #require(buffer.withUnsafeMutableBytes { server.receive(into: $0) })
        let downlink = try SRTPSession(key: SRTPKey(bytes: roomKey)!, direction: .outbound)
        let info = RTCPSenderInfo(ntpTimestamp: 0x1234_5678_9ABC_DEF0, rtpTimestamp: 0, packetCount: 0, octetCount: 0)
        let sent = MonotonicClock.microseconds()
        server.send(
            try downlink.protect(
                RTCPPacket.senderReport(ssrc: 0x0100_0002, info: info, reports: []).bytes(), rtcp: true),
            to: probe.from)
        for _ in 0..<100 {
            path.receive { _ in }
            usleep(5_000)
        }
        // The next report, 1.5 s after the sender report came.
        let now = MonotonicClock.microseconds() + 1_500_000
        path.maintain(now: now) { ([], []) }
        let uplink = try SRTPSession(key: SRTPKey(bytes: sendKey)!, direction: .inbound, ssrc: 0x0100_0001)
        var carried: RTCPReportBlock?
        while carried == nil, server.waitReadable(timeoutMilliseconds: 2000) {
            guard let got = buffer.withUnsafeMutableBytes({ server.receive(into: $0) }) else { break }
            let plain = try uplink.unprotect(Array(buffer[..<got.length]), rtcp: true)
            for case .receiverReport(_, let blocks) in try RTCPPacket.parseCompound(plain) {
                carried = blocks.first { $0.ssrc == 0x0100_0002 }
            }
        }
        let block = try #require(carried)
        #expect(block.lastSenderReport == 0x5678_9ABC)
        // At least the 1.5 s, in 1/65536 s, and no more than the time from sending it to that report.
        let most = UInt32((now - sent) * 65536 / 1_000_000)
        #expect((98_304...most).contains(block.delaySinceLastSenderReport))
    }
}
