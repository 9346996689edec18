import AudioCore
import Foundation
import MediaTransport
import MediaWire
import Platform
import Synchronization

// What the forwarding thread keeps per peer and per room; touched by that thread only.
extension MediaForwarder {
    /// A libsrtp session takes about 30 KiB (its cipher and HMAC contexts), so only peers that may publish keep
    /// one. Everyone else's session is made for the one RTCP packet that needs checking and then freed; their
    /// SRTCP replay check is the index kept here, which the authentication covers.
    final class PeerState {
        let info: MediaPeer
        private var session: SRTPSession?
        /// The highest SRTCP index accepted from this peer.
        var lastRTCPIndex: UInt32?
        var path = Path.none
        var statistics = RTPReceiveStatistics(minSequential: 0)
        /// The worst loss fraction (of 256) listeners reported for this speaker since the last report to it.
        var downstreamLoss: UInt8 = 0
        /// The runs of loss listeners on this node reported for this speaker since the last report to it, and the
        /// packets in them, all listeners together.
        var downstreamRuns = 0
        var downstreamRunLost = 0
        /// Whether the peer takes RFC 2198 redundancy in what it is sent.
        var takesRED = false
        /// The worst loss fraction (of 256) and jitter (RTP units) this peer reported of the speakers it hears,
        /// since its last measures.
        var downlinkLoss: UInt8 = 0
        var downlinkJitter: UInt32 = 0
        /// Packets from this peer that came after a later one (too late for a jitter buffer), since its last
        /// measures; and how many packets had come from it by then.
        var late = 0
        var receivedMark: UInt64 = 0
        /// The round trip last measured from a report answering the server's sender report, in ms.
        var rttMilliseconds = 0
        /// The last measures, handed to the rooms each second; nil until the first report.
        var measures: LinkMeasures?
        /// When anything authenticated last came from this peer, on any path (ms, monotonic).
        var lastActivity: Int64
        /// When an authenticated packet last came from the address the peer's media goes to (ms, monotonic).
        var lastHeard: Int64 = 0
        /// An address that sent an authenticated report and was sent a consent nonce, with the nonce: the media
        /// moves there once a report from there carries it back.
        var candidate: (address: UDPAddress, nonce: [UInt8])?
        /// When the last consent nonce went out (ms, monotonic).
        var lastChallenge: Int64 = .min / 2

        init(_ info: MediaPeer, at now: Int64) {
            self.info = info
            lastActivity = now
        }

        /// The peer's inbound session, made on first use.
        func uplink() throws(SRTPError) -> SRTPSession {
            if let session { return session }
            let created = try SRTPSession(key: info.uplinkKey, direction: .inbound, ssrc: info.ssrc)
            session = created
            return created
        }

        /// Frees the session of a peer that may not publish now (it is made again if it may later).
        func releaseSessionUnlessPublishing() {
            if !info.gate.isOpen { session = nil }
        }
    }

    final class RoomState {
        var downlink: SRTPSession
        var epoch: Int
        /// The listeners of one kind: those who take RED, or those who get the primary frames alone.
        struct Listeners {
            var udp: [(ssrc: UInt32, address: UDPAddress)] = []
            var webSocket: [(ssrc: UInt32, sink: @Sendable ([UInt8]) -> Void)] = []
            var hasListeners: Bool { !udp.isEmpty || !webSocket.isEmpty }

            mutating func removeAll() {
                udp.removeAll(keepingCapacity: true)
                webSocket.removeAll(keepingCapacity: true)
            }
        }

        var members: [UInt32: PeerState] = [:]
        var primaryOnly = Listeners()
        var takesRED = Listeners()
        var listenersChanged = false
        var activity = SpeakerActivity<UInt32>()
        /// The speakers of the last report, so one who went quiet is reported at 0 once.
        var reported: Set<UInt32> = []
        /// Each speaker's last sequence number sent, to notice when their numbers wrap.
        var lastSequence: [UInt32: UInt16] = [:]
        let name: String

        init(name: String, downlink: SRTPSession, epoch: Int) {
            self.name = name
            self.downlink = downlink
            self.epoch = epoch
        }

        func rebuildListeners() {
            primaryOnly.removeAll()
            takesRED.removeAll()
            for (ssrc, peer) in members {
                switch (peer.path, peer.takesRED) {
                case (.none, _): break
                case (.udp(let address), false): primaryOnly.udp.append((ssrc, address))
                case (.udp(let address), true): takesRED.udp.append((ssrc, address))
                case (.webSocket, false): primaryOnly.webSocket.append((ssrc, peer.info.webSocketSink))
                case (.webSocket, true): takesRED.webSocket.append((ssrc, peer.info.webSocketSink))
                }
            }
            listenersChanged = false
        }
    }
}
