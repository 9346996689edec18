import AudioCore
import Foundation
import MediaTransport
import MediaWire
import Platform
import Synchronization

// What the forwarder learns and tells besides forwarding, on the forwarding thread: RTCP from peers (checked,
// answered, reports passed on), consent to send to an address, each peer's link quality, the active speakers.
extension MediaForwarder {
    /// RTCP from a peer binds its flow (listeners send nothing else), carries its reception reports, and is
    /// answered with the server's report, protected with the room key: that answer is how a client learns that
    /// UDP gets through.
    func handleRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int, from source: Path, viaSSRC: UInt32?) {
        guard length >= 8 else {
            counters.add(.rtcpRejected)
            return
        }
        let ssrc = UInt32(buffer[4]) << 24 | UInt32(buffer[5]) << 16 | UInt32(buffer[6]) << 8 | UInt32(buffer[7])
        guard let peer = peers[ssrc], viaSSRC == nil || viaSSRC == ssrc, let room = rooms[peer.info.room] else {
            counters.add(.rtcpRejected)
            return
        }
        // The SRTCP index: the 31 bits before the 80-bit tag (RFC 3711 §3.4), authenticated with the packet.
        guard length >= 8 + 4 + 10 else {
            counters.add(.rtcpRejected)
            return
        }
        let indexOffset = length - 14
        let index =
            (UInt32(buffer[indexOffset]) << 24 | UInt32(buffer[indexOffset + 1]) << 16
                | UInt32(buffer[indexOffset + 2]) << 8 | UInt32(buffer[indexOffset + 3])) & 0x7FFF_FFFF
        let plainLength: Int
        do {
            plainLength = try peer.uplink().unprotectRTCP(buffer, length: length)
        } catch {
            peer.releaseSessionUnlessPublishing()
            counters.add(.rtcpRejected)
            return
        }
        peer.releaseSessionUnlessPublishing()
        if let last = peer.lastRTCPIndex, index <= last {
            counters.add(.replayed)
            return
        }
        peer.lastRTCPIndex = index
        peer.lastActivity = Self.milliseconds()
        counters.add(.rtcpReceived)
        let packets =
            (try? RTCPPacket.parseCompound(Array(UnsafeRawBufferPointer(rebasing: buffer[0..<plainLength])))) ?? []
        // Where the answer goes, and the nonce it carries when this source must first show it consents.
        let now = Self.milliseconds()
        var answerTo = source
        var nonce: [UInt8]?
        switch source {
        case .udp(let address) where peer.path != source && !bindsAtFirstPacket:
            if let candidate = peer.candidate, candidate.address == address,
                packets.contains(.consent(ssrc: ssrc, nonce: candidate.nonce))
            {
                peer.candidate = nil
                bind(peer, to: source, in: room)
                peer.lastHeard = now
            } else if now - peer.lastChallenge >= Self.challengeIntervalMilliseconds {
                // An authenticated report from a new address moves nothing yet: it may carry a spoofed source.
                // The nonce goes to that address; the peer there sends it back if it is really there.
                var fresh = [UInt8](repeating: 0, count: RTCPPacket.consentNonceBytes)
                var generator = SystemRandomNumberGenerator()
                for index in fresh.indices { fresh[index] = generator.next() }
                peer.candidate = (address, fresh)
                peer.lastChallenge = now
                nonce = fresh
                counters.add(.consentChecks)
            } else {
                counters.add(.consentLimited)
                answerTo = .none
            }
        default:
            heard(peer, from: source, in: room, at: now)
            answerTo = peer.path
        }
        for case .receiverReport(_, let reports) in packets {
            for report in reports {
                if let speaker = peers[report.ssrc] {
                    if speaker.info.room == peer.info.room {
                        speaker.downstreamLoss = max(speaker.downstreamLoss, report.fractionLost)
                        peer.downlinkLoss = max(peer.downlinkLoss, report.fractionLost)
                        peer.downlinkJitter = max(peer.downlinkJitter, report.jitter)
                    }
                } else if report.ssrc == serverSSRC {
                    if let rtt = Self.roundTrip(report, now: Self.compactTime()) { peer.rttMilliseconds = rtt }
                } else if relay?.listenerLoss(report, room: peer.info.room) == true {
                    // A speaker of another node of the cluster: what the listener lost of it is its downlink too.
                    peer.downlinkLoss = max(peer.downlinkLoss, report.fractionLost)
                    peer.downlinkJitter = max(peer.downlinkJitter, report.jitter)
                }
            }
        }
        for case .lossRuns(_, let entries) in packets {
            for entry in entries {
                guard let speaker = peers[entry.ssrc], speaker.info.room == peer.info.room else { continue }
                speaker.downstreamRuns += Int(entry.runs)
                speaker.downstreamRunLost += Int(entry.lost)
            }
        }
        var block = peer.statistics.reportBlock()
        measure(peer, uplink: block)
        block.ssrc = ssrc
        block.fractionLost = max(block.fractionLost, peer.downstreamLoss)
        peer.downstreamLoss = 0
        // With the share lost, how it was lost: the runs of the uplink and of every listener's downlink
        // together, which tell the speaker whether its loss comes in bursts (docs/media.md, "Redundancy").
        let uplinkRuns = peer.statistics.takeLossRuns()
        let runs = Int(uplinkRuns?.runs ?? 0) + peer.downstreamRuns
        let runLost = Int(uplinkRuns?.lost ?? 0) + peer.downstreamRunLost
        (peer.downstreamRuns, peer.downstreamRunLost) = (0, 0)
        // A sender report, so that the peer's next report carries its time back and gives the round trip.
        let info = RTCPSenderInfo(
            ntpTimestamp: UInt64(Self.compactTime()) << 16, rtpTimestamp: 0, packetCount: 0, octetCount: 0)
        var reply = RTCPPacket.senderReport(ssrc: serverSSRC, info: info, reports: [block]).bytes()
        if runs > 0 {
            reply += RTCPPacket.lossRuns(
                ssrc: serverSSRC,
                entries: [RTCPLossRuns(ssrc: ssrc, runs: UInt16(clamping: runs), lost: UInt16(clamping: runLost))]
            ).bytes()
        }
        if let nonce { reply += RTCPPacket.consent(ssrc: serverSSRC, nonce: nonce).bytes() }
        guard reply.count + SRTPSession.maxTrailer <= buffer.count else { return }
        buffer.copyBytes(from: reply)
        guard let protectedLength = try? room.downlink.protectRTCP(buffer, length: reply.count) else { return }
        let out = UnsafeRawBufferPointer(rebasing: buffer[0..<protectedLength])
        switch answerTo {
        case .udp(let address): send.append(out, to: address, on: socket)
        case .webSocket: peer.info.webSocketSink(Array(out))
        case .none: break
        }
    }

    /// An authenticated packet from `source`: the WebSocket (the peer's own connection) binds at once; the address
    /// the media goes to is heard from (its consent goes on); a packet from any other address moves nothing (a
    /// report from there starts a consent check), unless this forwarder binds at the first packet.
    func heard(_ peer: PeerState, from source: Path, in room: RoomState, at now: Int64) {
        switch source {
        case .webSocket:
            bind(peer, to: source, in: room)
        case .udp where peer.path == source:
            peer.lastHeard = now
        case .udp where bindsAtFirstPacket:
            bind(peer, to: source, in: room)
            peer.lastHeard = now
        case .udp, .none:
            break
        }
    }

    /// Stops sending to addresses nothing authenticated came from for `consentLifetimeMilliseconds` (every second).
    func sweepConsent() {
        let now = Self.milliseconds()
        guard now - lastConsentSweep >= 1000 else { return }
        lastConsentSweep = now
        for room in rooms.values {
            for peer in room.members.values {
                guard case .udp = peer.path, now - peer.lastHeard >= consentLifetime else { continue }
                peer.path = .none
                room.listenersChanged = true
                fanouts.remove(listener: peer.info.ssrc)
                counters.add(.consentLapsed)
            }
        }
    }

    /// Binds (or moves) a peer's flow to where its authenticated packet came from.
    private func bind(_ peer: PeerState, to source: Path, in room: RoomState) {
        guard peer.path != source else { return }
        peer.path = source
        room.listenersChanged = true
        counters.add(.bindings)
    }

    /// A peer's measures at one of its reports: the worse of its uplink (`uplink`, the server's own report of its
    /// stream, plus the packets that came late) and its downlink (its reports of the speakers it hears).
    private func measure(_ peer: PeerState, uplink: RTCPReportBlock) {
        let received = peer.statistics.received
        let receivedInInterval = received &- peer.receivedMark
        peer.receivedMark = received
        var uplinkLoss = Int(uplink.fractionLost) * 100 / 256
        if receivedInInterval > 0 { uplinkLoss += Int(min(UInt64(peer.late) * 100 / receivedInInterval, 100)) }
        peer.late = 0
        let downlinkLoss = Int(peer.downlinkLoss) * 100 / 256
        let jitter = max(peer.statistics.jitter, peer.downlinkJitter) / 48
        peer.downlinkLoss = 0
        peer.downlinkJitter = 0
        peer.measures = LinkMeasures(
            lossPercent: max(uplinkLoss, downlinkLoss), jitterMilliseconds: Int(jitter),
            rttMilliseconds: peer.rttMilliseconds)
    }

    /// Every half second (so that a report waits at most that long), hands each room's measures to the rooms: the
    /// last of each peer that reported, and no media for one that has sent nothing for
    /// `NetworkQuality.silenceMilliseconds`.
    func pollQuality() {
        let now = Self.milliseconds()
        guard now - lastQualityPoll >= 500 else { return }
        lastQualityPoll = now
        for (name, room) in rooms {
            var list: [(peer: String, measures: LinkMeasures)] = []
            for peer in room.members.values {
                if now - peer.lastActivity >= NetworkQuality.silenceMilliseconds {
                    list.append((peer.info.peer, .none))
                } else if let measures = peer.measures {
                    list.append((peer.info.peer, measures))
                }
            }
            if !list.isEmpty { onQuality(name, list) }
        }
    }

    /// The round trip from a peer's report block about the server's sender report (RFC 3550 §6.4.1): now minus
    /// the report's time (LSR) minus how long the peer held it (DLSR), in ms; nil without one.
    /// The monotonic clock in RFC 3550's compact form (16.16 fixed-point seconds, the middle 32 bits of an NTP
    /// timestamp): only this server compares the times it sends, so the clock need not be the wall clock.
    static func compactTime() -> UInt32 {
        UInt32(truncatingIfNeeded: MonotonicClock.microseconds() * 65536 / 1_000_000)
    }

    static func roundTrip(_ block: RTCPReportBlock, now: UInt32) -> Int? {
        guard block.lastSenderReport != 0 else { return nil }
        let units = now &- block.lastSenderReport &- block.delaySinceLastSenderReport
        // 1/65536 s units; a negative (wrapped) or absurd value is a clock step or a stale block.
        guard units < 65536 * 10 else { return nil }
        return Int(UInt64(units) * 1000 / 65536)
    }

    func pollSpeakers() {
        let now = Self.milliseconds()
        guard now - lastSpeakerPoll >= 50 else { return }
        lastSpeakerPoll = now
        for (name, room) in rooms {
            guard let levels = room.activity.poll(at: now) else { continue }
            var list: [(peer: String, level: Int)] = []
            for (ssrc, level) in levels {
                if let peer = room.members[ssrc] { list.append((peer.info.peer, level)) }
            }
            // A speaker who went quiet is reported once at 0.
            for ssrc in room.reported where levels[ssrc] == nil {
                if let peer = room.members[ssrc] { list.append((peer.info.peer, 0)) }
            }
            room.reported = Set(levels.keys)
            onSpeakers(name, list)
        }
    }
}
