import MediaTransport
import MediaWire
import RoomProtocol

/// The synthetic peers of a fanout run, listeners first and then speakers: an SSRC and an SRTP key each, binding
/// reports protected before measuring (so their sessions are not counted as the server's; several per peer, each
/// with its own SRTCP index, for the rounds that resend what the kernel dropped), and each speaker's uplink.
package struct SyntheticPeers {
    package let ssrcs: [UInt32]
    package let keys: [SRTPKey]
    /// Per peer, `rounds` protected receiver reports.
    package let reports: [[[UInt8]]]
    /// Per speaker, the session that protects what it sends.
    package let uplinks: [SRTPSession]

    package init(speakers: Int, listeners: Int, rounds: Int) throws {
        let count = speakers + listeners
        let ssrcs = (0..<count).map { UInt32(0x1000 + $0) }
        let keys = (0..<count).map { index in
            SRTPKey(bytes: (0..<30).map { UInt8(truncatingIfNeeded: $0 &+ index &* 31) })!
        }
        reports = try (0..<count).map { index -> [[UInt8]] in
            let session = try SRTPSession(key: keys[index], direction: .outbound)
            let report = RTCPPacket.receiverReport(ssrc: ssrcs[index], reports: []).bytes()
            return try (0..<rounds).map { _ in try session.protect(report, rtcp: true) }
        }
        uplinks = try (0..<speakers).map { try SRTPSession(key: keys[listeners + $0], direction: .outbound) }
        self.ssrcs = ssrcs
        self.keys = keys
    }
}
