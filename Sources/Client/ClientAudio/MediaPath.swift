import AudioCore
import MediaTransport
import MediaWire
import Platform
import RoomProtocol
import Synchronization

/// The control connection as the media plane sees it: binary messages carry media on the WebSocket path, and a
/// text message tells the server which path was chosen (`media_path`).
public struct MediaChannel: Sendable {
    /// Sends one binary WebSocket message (an SRTP or SRTCP packet).
    public var sendBinary: @Sendable ([UInt8]) -> Void
    /// Sends one text message as it is.
    public var sendText: @Sendable (String) -> Void

    /// A channel sending through these functions.
    public init(sendBinary: @escaping @Sendable ([UInt8]) -> Void, sendText: @escaping @Sendable (String) -> Void) {
        self.sendBinary = sendBinary
        self.sendText = sendText
    }

    /// A channel that sends nothing, for media before the session is attached.
    public static let none = MediaChannel(sendBinary: { _ in }, sendText: { _ in })
}

/// What came in over the media path, opened.
enum Incoming {
    /// An RTP packet of the room, decrypted in place: its bytes, and when it arrived (µs, monotonic).
    case rtp(UnsafeRawBufferPointer, arrival: Int64)
    /// The server's receiver report about this client's stream: the share of its packets being lost, and the runs
    /// they were lost in when the server said them.
    case lossReport(percent: Int, runs: RTCPLossRuns?)
}

/// How one connection's media travels: the UDP socket towards the server, the SRTP sessions (this client's
/// uplink key, and the room's key with the previous one kept for packets on their way), and the choice of path.
/// UDP is probed first with SRTCP receiver reports; the first answer proves it works, and without one within
/// the probe timeout media falls back to the WebSocket. Used by the media thread only, but for the two inboxes
/// that other threads fill (room keys and WebSocket packets), each behind a short lock.
final class MediaPath {
    /// How often receiver reports go out once the path is chosen, and while probing UDP, in µs.
    static let reportInterval: Int64 = 1_000_000
    static let probeInterval: Int64 = 200_000

    let offer: MediaOffer
    /// RED's payload type when this client takes it (told to the server in `media_path`).
    private let redPayloadType: UInt8?
    private(set) var kind: MediaPathKind?
    private let blockUDP: Bool
    private let channel: MediaChannel
    private let onChosen: (MediaPathKind) -> Void
    private let socket: UDPSocket
    /// Where UDP media goes; nil when the server offered no address this client can reach.
    private let server: UDPAddress?
    private let uplink: SRTPSession
    private var roomSessions: [(epoch: Int, session: SRTPSession)]
    /// Packets no key opened: after a rotation, the first packets under the new key can arrive before
    /// `media_key` does. They are tried again when a key arrives (a few at most; older ones are dropped).
    private var unopened: [[UInt8]] = []
    private let webSocketInbox = Mutex<[[UInt8]]>([])
    private let pendingKeys = Mutex<[(key: SRTPKey, epoch: Int)]>([])
    private let probeDeadline: Int64
    private var lastReport: Int64
    /// The server's last sender report: its SSRC, its time (the middle 32 bits of its NTP timestamp) and when it
    /// arrived (µs, monotonic); the next report carries it back so that the server measures the round trip.
    private var lastSenderReport: (ssrc: UInt32, time: UInt32, arrival: Int64)?
    /// For packets from the WebSocket and those tried again after a new key.
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
    /// For what UDP brings: a batch of slots, read with one system call.
    private let batch = ReceiveBatch(capacity: 16, slotSize: 2048)

    /// Opens the socket and the SRTP sessions for `offer`. `onChosen` runs on the media thread when the path is
    /// chosen, after the server has been told.
    init(
        offer: MediaOffer, redPayloadType: UInt8? = nil, blockUDP: Bool, probeTimeout: Duration,
        channel: MediaChannel, onChosen: @escaping (MediaPathKind) -> Void
    ) throws {
        self.redPayloadType = redPayloadType
        guard let sendKey = SRTPKey(bytes: offer.sendKey), let roomKey = SRTPKey(bytes: offer.roomKey) else {
            throw MediaSignalError(message: "keys must be 30 bytes")
        }
        var server: UDPAddress?
        if offer.hasUDP {
            guard let address = UDPAddress(host: offer.host, port: UInt16(clamping: offer.port)) else {
                throw MediaSignalError(message: "the media host \(offer.host) is not an IPv4 address")
            }
            server = address
        }
        self.offer = offer
        self.blockUDP = blockUDP
        self.channel = channel
        self.onChosen = onChosen
        self.server = server
        socket = try UDPSocket(binding: UDPAddress(ipv4: 0, port: 0), bufferBytes: 1 << 20)
        // Every member of the room holds the room key, so a packet that opens under it proves only that a member
        // made it: connected to the server's address, the socket takes media from the server alone, and a member
        // who sends forged packets straight to this port is not heard.
        if let server { try socket.connect(to: server) }
        _ = socket.stampArrivals()
        uplink = try SRTPSession(key: sendKey, direction: .outbound, ssrc: offer.ssrc)
        roomSessions = [(offer.epoch, try SRTPSession(key: roomKey, direction: .inbound))]
        let now = MonotonicClock.microseconds()
        probeDeadline = now + probeTimeout.inMicroseconds
        lastReport = now - 10_000_000
    }

    deinit {
        buffer.deallocate()
    }

    /// A binary WebSocket message from the server (any thread).
    func receivedOverWebSocket(_ bytes: [UInt8]) {
        webSocketInbox.withLock { $0.append(bytes) }
    }

    /// The room's new key (any thread); used from the media thread's next pass.
    func newRoomKey(_ key: SRTPKey, epoch: Int) {
        pendingKeys.withLock { $0.append((key, epoch)) }
    }

    /// Sends a receiver report when one is due: every 200 ms while UDP is being probed, every second after;
    /// falls back to the WebSocket when the probe has had no answer by its deadline.
    func maintain(now: Int64, report: () -> (blocks: [RTCPReportBlock], runs: [RTCPLossRuns])) {
        // No UDP address: the WebSocket is the only way, so there is nothing to probe.
        if kind == nil, server == nil || now >= probeDeadline {
            choose(.websocket)
        }
        let interval = kind == nil ? Self.probeInterval : Self.reportInterval
        guard now - lastReport >= interval else { return }
        lastReport = now
        let reported = report()
        var blocks = reported.blocks
        if let sender = lastSenderReport {
            // RFC 3550 §6.4.1: LSR, and the delay since it came (DLSR) in 1/65536 s, first so it is never cut.
            let held = UInt32(clamping: (now - sender.arrival) * 65536 / 1_000_000)
            blocks.insert(
                RTCPReportBlock(
                    ssrc: sender.ssrc, fractionLost: 0, cumulativeLost: 0, extendedHighestSequence: 0, jitter: 0,
                    lastSenderReport: sender.time, delaySinceLastSenderReport: held), at: 0)
            lastSenderReport = nil
        }
        var compound = RTCPPacket.receiverReport(ssrc: offer.ssrc, reports: blocks).bytes()
        if !reported.runs.isEmpty {
            // The packet keeps the first `RTCPPacket.maxLossRunsEntries` entries itself.
            compound += RTCPPacket.lossRuns(ssrc: offer.ssrc, entries: reported.runs).bytes()
        }
        guard let protected = try? uplink.protect(compound, rtcp: true) else { return }
        protected.withUnsafeBytes { transmit($0) }
    }

    /// Protects the RTP packet in `packet` (its first `length` bytes; the buffer has room for the SRTP trailer)
    /// in place and sends it on the current path.
    func sendRTP(_ packet: UnsafeMutableRawBufferPointer, length: Int) -> Bool {
        guard let protected = try? uplink.protect(packet, length: length) else { return false }
        transmit(UnsafeRawBufferPointer(rebasing: packet[0..<protected]))
        return true
    }

    /// Takes everything that came in since the last call (datagrams queued on the socket, WebSocket messages),
    /// opens it, and hands each RTP packet and each report about this client to `handle`.
    func receive(_ handle: (Incoming) -> Void) {
        applyPendingKeys(handle)
        // Everything queued, in one system call per batch (a tick finds one packet per speaker heard).
        while true {
            let received = batch.receiveStamped(from: socket)
            let now = MonotonicClock.microseconds()
            for index in 0..<received where !blockUDP {
                let arrival = now - min(batch.ageMicroseconds(index), 1_000_000)
                open(
                    batch.slot(index), length: batch.length(index), viaUDP: true, arrival: arrival, retry: false, handle
                )
            }
            if received < batch.capacity { break }
        }
        let messages = webSocketInbox.withLock { inbox -> [[UInt8]] in
            defer { inbox.removeAll() }
            return inbox
        }
        for bytes in messages where bytes.count + SRTPSession.maxTrailer <= buffer.count {
            buffer.copyBytes(from: bytes)
            open(
                buffer, length: bytes.count, viaUDP: false, arrival: MonotonicClock.microseconds(), retry: false, handle
            )
        }
    }

    private func choose(_ chosen: MediaPathKind) {
        guard kind != chosen else { return }
        kind = chosen
        channel.sendText(MediaSignalCodec.encode(.mediaPath(chosen, takesRED: redPayloadType != nil)))
        onChosen(chosen)
        // The first report over the WebSocket goes out at once; over UDP one has just been answered.
        if chosen == .websocket { lastReport = .min / 2 }
    }

    /// A report that carries the server's consent nonce back, over UDP.
    private func answerConsent(_ nonce: [UInt8]) {
        guard !blockUDP, let server else { return }
        let answer =
            RTCPPacket.receiverReport(ssrc: offer.ssrc, reports: []).bytes()
            + RTCPPacket.consent(ssrc: offer.ssrc, nonce: nonce).bytes()
        guard let protected = try? uplink.protect(answer, rtcp: true) else { return }
        socket.send(protected, to: server)
    }

    private func transmit(_ bytes: UnsafeRawBufferPointer) {
        switch kind ?? .udp {
        case .udp: if !blockUDP, let server { socket.send(bytes, to: server) }
        case .websocket: channel.sendBinary(Array(bytes))
        }
    }

    private func applyPendingKeys(_ handle: (Incoming) -> Void) {
        let keys = pendingKeys.withLock { keys -> [(key: SRTPKey, epoch: Int)] in
            defer { keys.removeAll() }
            return keys
        }
        guard !keys.isEmpty else { return }
        for (key, epoch) in keys {
            guard let session = try? SRTPSession(key: key, direction: .inbound) else { continue }
            // The newest key first; the previous one stays for packets already on their way.
            roomSessions.insert((epoch, session), at: 0)
            roomSessions = Array(roomSessions.prefix(2))
        }
        let waiting = unopened
        unopened.removeAll()
        for bytes in waiting where bytes.count + SRTPSession.maxTrailer <= buffer.count {
            buffer.copyBytes(from: bytes)
            open(
                buffer, length: bytes.count, viaUDP: false, arrival: MonotonicClock.microseconds(), retry: true, handle)
        }
    }

    /// Opens the packet of `length` bytes in `buffer` (in place).
    private func open(
        _ buffer: UnsafeMutableRawBufferPointer, length: Int, viaUDP: Bool, arrival: Int64, retry: Bool,
        _ handle: (Incoming) -> Void
    ) {
        let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        if RTCPPacket.isRTCP(packet) {
            for (_, session) in roomSessions {
                guard let plain = try? session.unprotectRTCP(buffer, length: length) else { continue }
                // The socket is connected to the server's address, so this came from there: an answer over UDP
                // proves the path. (Every member holds the room key; the connection, not the key, says who sent.)
                if viaUDP, kind == nil { choose(.udp) }
                let bytes = Array(UnsafeRawBufferPointer(rebasing: buffer[0..<plain]))
                guard let packets = try? RTCPPacket.parseCompound(bytes) else { return }
                // The server sends media to a new address only once the client there sends its nonce back
                // (a consent check): answered at once, from this socket.
                for case .consent(_, let nonce) in packets where viaUDP {
                    answerConsent(nonce)
                }
                var runs: RTCPLossRuns?
                for case .lossRuns(_, let entries) in packets {
                    runs = entries.first { $0.ssrc == offer.ssrc } ?? runs
                }
                for packet in packets {
                    let reports: [RTCPReportBlock]
                    switch packet {
                    case .receiverReport(_, let blocks): reports = blocks
                    case .senderReport(let sender, let info, let blocks):
                        reports = blocks
                        lastSenderReport = (sender, UInt32(truncatingIfNeeded: info.ntpTimestamp >> 16), arrival)
                    default: reports = []
                    }
                    for report in reports where report.ssrc == offer.ssrc {
                        handle(.lossReport(percent: report.lossPercent, runs: runs))
                    }
                }
                return
            }
            return
        }
        guard length >= RTPHeader.fixedLength,
            packet[1] & 0x7F == UInt8(truncatingIfNeeded: offer.payloadType)
                || (redPayloadType != nil && packet[1] & 0x7F == redPayloadType)
        else { return }
        for (_, session) in roomSessions {
            if let plain = try? session.unprotect(buffer, length: length) {
                handle(.rtp(UnsafeRawBufferPointer(rebasing: buffer[0..<plain]), arrival: arrival))
                return
            }
        }
        if !retry {
            if unopened.count >= 16 { unopened.removeFirst() }
            unopened.append(Array(packet))
        }
    }
}
