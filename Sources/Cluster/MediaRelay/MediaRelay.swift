import Foundation
import MediaServer
import MediaTransport
import MediaWire
import Platform
import Synchronization

/// The relay's counters: every datagram it receives ends in exactly one of the inbound ones.
public final class RelayCounters: Sendable {
    public enum Name: String, CaseIterable, Sendable {
        /// Packets sent to other nodes (one per speaker packet per remote node of its room).
        case sent = "relay_sent"
        /// Packets from other nodes handed to the local forwarder.
        case delivered = "relay_delivered"
        /// Not RTP, or too large.
        case malformed = "relay_malformed"
        /// An SSRC no remote speaker of any room has here.
        case unknownSSRC = "relay_unknown_ssrc"
        /// From another address than the speaker's node's relay socket.
        case wrongSource = "relay_wrong_source"
        /// The speaker may not publish in this node's copy of the room.
        case notPermitted = "relay_not_permitted"
        /// Did not authenticate under the sending node's relay key: another cluster secret, or a stale incarnation.
        case authenticationFailed = "relay_auth_failed"
        /// Replayed or too old.
        case replayed = "relay_replayed"
        /// Keepalives sent to other nodes (one per room per remote node of it every second).
        case keepaliveSent = "relay_keepalive_sent"
        /// Keepalives from other nodes that authenticated.
        case keepaliveReceived = "relay_keepalive_received"
        /// Keepalives refused: from no node of a room here, not authenticating (another cluster secret, a stale
        /// incarnation), replayed, or not a report.
        case keepaliveRefused = "relay_keepalive_refused"
    }

    private let sentCount = Atomic<Int>(0)
    private let deliveredCount = Atomic<Int>(0)
    private let malformedCount = Atomic<Int>(0)
    private let unknownCount = Atomic<Int>(0)
    private let wrongSourceCount = Atomic<Int>(0)
    private let notPermittedCount = Atomic<Int>(0)
    private let authenticationCount = Atomic<Int>(0)
    private let replayedCount = Atomic<Int>(0)
    private let keepaliveSentCount = Atomic<Int>(0)
    private let keepaliveReceivedCount = Atomic<Int>(0)
    private let keepaliveRefusedCount = Atomic<Int>(0)

    func add(_ name: Name, _ amount: Int = 1) {
        switch name {
        case .sent: sentCount.add(amount, ordering: .relaxed)
        case .delivered: deliveredCount.add(amount, ordering: .relaxed)
        case .malformed: malformedCount.add(amount, ordering: .relaxed)
        case .unknownSSRC: unknownCount.add(amount, ordering: .relaxed)
        case .wrongSource: wrongSourceCount.add(amount, ordering: .relaxed)
        case .notPermitted: notPermittedCount.add(amount, ordering: .relaxed)
        case .authenticationFailed: authenticationCount.add(amount, ordering: .relaxed)
        case .replayed: replayedCount.add(amount, ordering: .relaxed)
        case .keepaliveSent: keepaliveSentCount.add(amount, ordering: .relaxed)
        case .keepaliveReceived: keepaliveReceivedCount.add(amount, ordering: .relaxed)
        case .keepaliveRefused: keepaliveRefusedCount.add(amount, ordering: .relaxed)
        }
    }

    public func value(_ name: Name) -> Int {
        switch name {
        case .sent: sentCount.load(ordering: .relaxed)
        case .delivered: deliveredCount.load(ordering: .relaxed)
        case .malformed: malformedCount.load(ordering: .relaxed)
        case .unknownSSRC: unknownCount.load(ordering: .relaxed)
        case .wrongSource: wrongSourceCount.load(ordering: .relaxed)
        case .notPermitted: notPermittedCount.load(ordering: .relaxed)
        case .authenticationFailed: authenticationCount.load(ordering: .relaxed)
        case .replayed: replayedCount.load(ordering: .relaxed)
        case .keepaliveSent: keepaliveSentCount.load(ordering: .relaxed)
        case .keepaliveReceived: keepaliveReceivedCount.load(ordering: .relaxed)
        case .keepaliveRefused: keepaliveRefusedCount.load(ordering: .relaxed)
        }
    }

    public func snapshot() -> [(name: String, value: Int)] { Name.allCases.map { ($0.rawValue, value($0)) } }
}

/// Media between the nodes of a cluster: each local speaker's packet crosses to each other node of its room
/// once, however many listeners that node has; that node checks it and fans it out to its own listeners.
///
/// Outbound, the forwarder hands the relay each accepted packet in plain RTP (`MediaRelayTap`, on the
/// forwarding thread); the relay protects it once with this node's relay key for the room and sends the same
/// bytes to every remote node of the room. Inbound, the forwarding thread waits on the relay socket beside its
/// own and hands the relay each datagram (`relayed`); the relay checks that the SSRC belongs to a remote speaker
/// of a room here, that it came from that speaker's node, that this node's copy of the room lets the speaker
/// publish (its gate), and that it authenticates under the sending node's key, and the forwarder fans it out.
/// One thread and no copy between the relay socket and the listeners. A packet that does not authenticate is
/// counted, and logged once per node and room every 10 s: the nodes' cluster secrets differ.
///
/// **Sessions.** A node relays a room in a session, numbered from 1 up within its incarnation: each time it
/// begins relaying a room (again) it starts a new one, under a new key (`RelayKeys`), so no key ever protects two
/// runs of sequence numbers. Every datagram carries its session number in 8 bytes after the SRTP packet; the
/// receiver follows a newer session of that node for that room once a packet authenticates under its key, and
/// refuses packets of older sessions.
///
/// **Keepalives.** Every second the relay sends each other node of each room it relays one SRTCP receiver
/// report, protected with this node's relay key for the room. Its sender SSRC is the room's tag
/// (`RelayKeys.roomTag`), so the receiver knows which room's key to check it under; its report blocks carry,
/// for each speaker of the receiving node, the worst loss (fraction and cumulative) that this node's listeners
/// reported since the last keepalive. The speaker's node adds that loss to what its own listeners report, so the
/// speaker's FEC follows every node's listeners. Keepalives and authenticated media are what tell a node that
/// another node of the room still reaches it (`silentRooms`).
public final class MediaRelay: MediaRelayTap, @unchecked Sendable {
    // Safe to share: `outbound` and `inbound` are behind mutexes; `scratch` and the sessions are used on the
    // forwarding thread only (the tap's two calls).
    public let socket: UDPSocket
    public let counters = RelayCounters()
    public let node: String
    public let incarnation: UInt64
    private let secret: [UInt8]
    private let forwarder: MediaForwarder
    private let log: @Sendable (String) -> Void
    private let running = Atomic<Bool>(false)
    private let outbound = Mutex<[String: OutboundRoom]>([:])
    private let inbound = Mutex<InboundState>(InboundState())
    private let scratch: UnsafeMutableRawBufferPointer
    /// One speaker packet's copies to the room's other nodes, sent with one sendmmsg (forwarding thread only).
    private let sends = SendBatch(capacity: 32)

    private final class OutboundRoom {
        let session: SRTPSession
        /// The session's number, sent after every packet of it (big-endian).
        let number: [UInt8]
        let tag: UInt32
        var targets: [RelayNode] = []

        init(session: SRTPSession, number: UInt64, tag: UInt32) {
            self.session = session
            self.number = (0..<8).map { UInt8(truncatingIfNeeded: number >> (56 - 8 * $0)) }
            self.tag = tag
        }
    }

    /// The bytes of the session number after each relayed packet.
    static let sessionNumberBytes = 8
    /// The last session number this incarnation used (under the `outbound` lock).
    private var lastSession: UInt64 = 0

    private struct RoomNode: Hashable {
        var room: String
        var node: String
    }

    private struct RemoteSpeaker {
        var room: String
        var node: String
        var gate: PublishGate
    }

    private struct SessionKey: Hashable {
        var room: String
        var node: String
        var incarnation: UInt64
    }

    private struct InboundState {
        var nodes: [String: RelayNode] = [:]
        var speakers: [UInt32: RemoteSpeaker] = [:]
        /// One session per room and sending incarnation: the newest whose packets authenticated, with its number.
        var sessions: [SessionKey: (number: UInt64, session: SRTPSession)] = [:]
        var lastComplaint: [String: Int64] = [:]
        /// Rooms with other nodes, by their keepalive tag (a tag could be shared: each is tried).
        var roomTags: [UInt32: Set<String>] = [:]
        /// When authenticated media or a keepalive last came from each other node of each room (or when that node
        /// became one of the room's, which gives it the same grace).
        var heard: [RoomNode: Int64] = [:]
        /// The worst loss this node's listeners reported since the last keepalive, per remote speaker.
        var loss: [UInt32: RTCPReportBlock] = [:]
    }

    /// At most this many speakers' losses go in one keepalive (two receiver reports, within one datagram).
    static let maxKeepaliveBlocks = 50
    private static let blocksPerReport = 25
    /// When the keepalives last went out (forwarding thread only).
    private var lastKeepalive: Int64 = 0

    /// Binds the relay socket (port 0 picks one) for the node `node` in its incarnation `incarnation`, with
    /// the cluster's shared secret. `log` receives a line whenever another node's media is refused.
    public init(
        node: String, incarnation: UInt64, secret: [UInt8], binding address: UDPAddress, forwarder: MediaForwarder,
        log: @escaping @Sendable (String) -> Void
    ) throws(UDPError) {
        socket = try UDPSocket(binding: address, bufferBytes: 4 << 20)
        self.node = node
        self.incarnation = incarnation
        self.secret = secret
        self.forwarder = forwarder
        self.log = log
        scratch = .allocate(byteCount: 1500 + SRTPSession.maxTrailer, alignment: 16)
    }

    deinit {
        scratch.deallocate()
    }

    /// Attaches to the forwarder: its thread relays this node's speakers and reads the relay socket.
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        forwarder.attach(self)
    }

    /// Detaches from the forwarder: nothing more is relayed either way.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        forwarder.attach(nil)
    }

    // MARK: What the cluster tells the relay

    /// This relay as the other nodes of its rooms know it: what they give `setRemoteNodes`.
    public var asRemoteNode: RelayNode { RelayNode(name: node, incarnation: incarnation, address: socket.localAddress) }

    /// The other nodes that have peers in `room` (this node left out): each local speaker's packets go to each.
    public func setRemoteNodes(_ nodes: [RelayNode], room: String) {
        let others = nodes.filter { $0.name != node }
        let tag = RelayKeys.roomTag(room: room)
        outbound.withLock { rooms in
            if others.isEmpty {
                rooms[room] = nil
                return
            }
            if rooms[room] == nil {
                lastSession += 1
                let key = RelayKeys.key(
                    secret: secret, room: room, node: node, incarnation: incarnation, session: lastSession)
                guard let session = try? SRTPSession(key: key, direction: .outbound) else { return }
                rooms[room] = OutboundRoom(session: session, number: lastSession, tag: tag)
            }
            rooms[room]?.targets = others
        }
        let now = MonotonicClock.milliseconds()
        inbound.withLock { state in
            let names = Set(others.map(\.name))
            state.heard = state.heard.filter { $0.key.room != room || names.contains($0.key.node) }
            for other in others {
                if let old = state.nodes[other.name], old.incarnation != other.incarnation {
                    state.sessions = state.sessions.filter { $0.key.room != room || $0.key.node != other.name }
                    state.heard[RoomNode(room: room, node: other.name)] = now
                }
                state.nodes[other.name] = other
                let key = RoomNode(room: room, node: other.name)
                if state.heard[key] == nil { state.heard[key] = now }
            }
            if others.isEmpty {
                state.roomTags[tag]?.remove(room)
                if state.roomTags[tag]?.isEmpty == true { state.roomTags[tag] = nil }
            } else {
                state.roomTags[tag, default: []].insert(room)
            }
        }
    }

    /// A speaker of `room` whose home is node `node`: its packets are accepted from that node while `gate`
    /// (this node's copy of the speaker's permission) is open.
    public func addRemoteSpeaker(ssrc: UInt32, room: String, node: String, gate: PublishGate) {
        inbound.withLock { $0.speakers[ssrc] = RemoteSpeaker(room: room, node: node, gate: gate) }
    }

    public func removeRemoteSpeaker(ssrc: UInt32) {
        inbound.withLock { state in
            state.speakers[ssrc] = nil
            state.loss[ssrc] = nil
        }
    }

    /// A node left the cluster: nothing more is sent to it or accepted from it.
    public func removeNode(_ name: String) {
        outbound.withLock { rooms in
            for room in rooms.values { room.targets.removeAll { $0.name == name } }
        }
        inbound.withLock { state in
            state.nodes[name] = nil
            state.speakers = state.speakers.filter { $0.value.node != name }
            state.loss = state.loss.filter { state.speakers[$0.key] != nil }
            state.sessions = state.sessions.filter { $0.key.node != name }
            state.heard = state.heard.filter { $0.key.node != name }
        }
    }

    /// Forgets a room: its relays in both directions stop.
    public func closeRoom(_ room: String) {
        outbound.withLock { _ = $0.removeValue(forKey: room) }
        let tag = RelayKeys.roomTag(room: room)
        inbound.withLock { state in
            state.speakers = state.speakers.filter { $0.value.room != room }
            state.loss = state.loss.filter { state.speakers[$0.key] != nil }
            state.sessions = state.sessions.filter { $0.key.room != room }
            state.heard = state.heard.filter { $0.key.room != room }
            state.roomTags[tag]?.remove(room)
            if state.roomTags[tag]?.isEmpty == true { state.roomTags[tag] = nil }
        }
    }

    /// Starts the silence of `room`'s other nodes (every room's, with nil) afresh from now: for when this node
    /// begins to serve people in the room again, or hears from Redis again, and the others may only now be
    /// starting to send to it.
    public func restartSilence(room: String? = nil) {
        let now = MonotonicClock.milliseconds()
        inbound.withLock { state in
            for key in state.heard.keys where room == nil || key.room == room { state.heard[key] = now }
        }
    }

    /// A room whose other nodes have all been silent: those nodes' names, and how long ago each was last heard.
    public struct Silence: Sendable, Equatable {
        public var room: String
        /// Milliseconds since each of the room's other nodes was last heard in it.
        public var quietMilliseconds: [String: Int64]
        /// The silent nodes' names, sorted.
        public var nodes: [String] { quietMilliseconds.keys.sorted() }
    }

    /// The rooms whose other nodes have all been silent (no authenticated media, no keepalive) for at least
    /// `milliseconds`. A room this node relays to no one is never in it.
    public func silentRooms(forMilliseconds milliseconds: Int64) -> [Silence] {
        let targets = outbound.withLock { rooms in rooms.mapValues { $0.targets.map(\.name) } }
        let now = MonotonicClock.milliseconds()
        return inbound.withLock { state in
            targets.compactMap { room, nodes -> Silence? in
                guard !nodes.isEmpty else { return nil }
                let quiet = Dictionary(
                    uniqueKeysWithValues: nodes.map { name in
                        (name, now - (state.heard[RoomNode(room: room, node: name)] ?? now))
                    })
                guard quiet.values.allSatisfy({ $0 >= milliseconds }) else { return nil }
                return Silence(room: room, quietMilliseconds: quiet)
            }
            .sorted { $0.room < $1.room }
        }
    }

    // MARK: Outbound, on the forwarding thread

    public func forwarded(_ packet: UnsafeRawBufferPointer, room: String, ssrc: UInt32) {
        guard packet.count + SRTPSession.maxTrailer <= scratch.count else { return }
        outbound.withLock { rooms in
            guard let target = rooms[room], !target.targets.isEmpty else { return }
            scratch.copyMemory(from: packet)
            guard let protected = try? target.session.protect(scratch, length: packet.count),
                protected + Self.sessionNumberBytes <= scratch.count
            else { return }
            let length = Self.appendSessionNumber(target.number, to: scratch, at: protected)
            let bytes = UnsafeRawBufferPointer(rebasing: scratch[0..<length])
            let droppedBefore = sends.dropped
            for remote in target.targets { sends.append(bytes, to: remote.address, on: socket) }
            sends.flush(on: socket)
            counters.add(.sent, target.targets.count - (sends.dropped - droppedBefore))
        }
    }

    @discardableResult
    public func listenerLoss(_ block: RTCPReportBlock, room: String) -> Bool {
        inbound.withLock { state in
            guard let speaker = state.speakers[block.ssrc], speaker.room == room else { return false }
            guard var worst = state.loss[block.ssrc] else {
                state.loss[block.ssrc] = block
                return true
            }
            worst.fractionLost = max(worst.fractionLost, block.fractionLost)
            worst.cumulativeLost = max(worst.cumulativeLost, block.cumulativeLost)
            worst.jitter = max(worst.jitter, block.jitter)
            worst.extendedHighestSequence = max(worst.extendedHighestSequence, block.extendedHighestSequence)
            state.loss[block.ssrc] = worst
            return true
        }
    }

    public func tick() {
        let now = MonotonicClock.milliseconds()
        guard now - lastKeepalive >= 1000 else { return }
        lastKeepalive = now
        let reports = inbound.withLock { state -> [RoomNode: [RTCPReportBlock]] in
            defer { state.loss.removeAll(keepingCapacity: true) }
            var reports: [RoomNode: [RTCPReportBlock]] = [:]
            for (ssrc, block) in state.loss {
                guard let speaker = state.speakers[ssrc] else { continue }
                reports[RoomNode(room: speaker.room, node: speaker.node), default: []].append(block)
            }
            return reports
        }
        outbound.withLock { rooms in
            for (room, target) in rooms {
                for remote in target.targets {
                    let blocks = (reports[RoomNode(room: room, node: remote.name)] ?? []).sorted { $0.ssrc < $1.ssrc }
                    var bytes: [UInt8] = []
                    var start = 0
                    let kept = blocks.prefix(Self.maxKeepaliveBlocks)
                    repeat {
                        let chunk = Array(kept.dropFirst(start).prefix(Self.blocksPerReport))
                        bytes += RTCPPacket.receiverReport(ssrc: target.tag, reports: chunk).bytes()
                        start += Self.blocksPerReport
                    } while start < kept.count
                    guard bytes.count + SRTPSession.maxTrailer + Self.sessionNumberBytes <= scratch.count else {
                        continue
                    }
                    scratch.copyBytes(from: bytes)
                    guard let protected = try? target.session.protectRTCP(scratch, length: bytes.count) else {
                        continue
                    }
                    let length = Self.appendSessionNumber(target.number, to: scratch, at: protected)
                    if socket.send(UnsafeRawBufferPointer(rebasing: scratch[0..<length]), to: remote.address) {
                        counters.add(.keepaliveSent)
                    }
                }
            }
        }
    }

    // MARK: Inbound, on the forwarding thread

    public var inboundSocket: UDPSocket { socket }

    public func relayed(
        _ buffer: UnsafeMutableRawBufferPointer, length: Int, from sender: UDPAddress
    )
        -> RelayedDatagram?
    {
        // The sender's session number follows the packet.
        guard length >= 8 + Self.sessionNumberBytes, length < buffer.count else {
            counters.add(.malformed)
            return nil
        }
        let number = Self.sessionNumber(in: buffer, end: length)
        let length = length - Self.sessionNumberBytes
        let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        if RTCPPacket.isRTCP(packet) {
            return keepalive(buffer, length: length, session: number, from: sender)
        }
        // A datagram that fills the buffer may have been cut short: refused as too large.
        guard length >= 12, !RTCPPacket.isRTCP(packet), let header = try? RTPHeader.parse(packet)
        else {
            counters.add(.malformed)
            return nil
        }
        enum Verdict {
            case deliver(room: String, length: Int)
            case refuse(RelayCounters.Name)
            case complain(room: String, node: RelayNode)
        }
        let verdict = inbound.withLock { state -> Verdict in
            guard let speaker = state.speakers[header.ssrc], let origin = state.nodes[speaker.node] else {
                return .refuse(.unknownSSRC)
            }
            guard origin.address == sender else { return .refuse(.wrongSource) }
            // Checked before any crypto, on every packet: a muted or demoted speaker is cut off here at once.
            guard speaker.gate.isOpen else { return .refuse(.notPermitted) }
            let sessionKey = SessionKey(room: speaker.room, node: origin.name, incarnation: origin.incarnation)
            guard let session = inboundSession(state.sessions[sessionKey], key: sessionKey, number: number) else {
                return .refuse(.replayed)
            }
            do throws(SRTPError) {
                let plain = try session.unprotect(buffer, length: length)
                state.sessions[sessionKey] = (number, session)
                state.heard[RoomNode(room: speaker.room, node: origin.name)] = MonotonicClock.milliseconds()
                return .deliver(room: speaker.room, length: plain)
            } catch .authenticationFailed {
                guard Self.shouldComplain(&state, room: speaker.room, origin: origin.name) else {
                    return .refuse(.authenticationFailed)
                }
                return .complain(room: speaker.room, node: origin)
            } catch .replayed {
                return .refuse(.replayed)
            } catch {
                return .refuse(.malformed)
            }
        }
        switch verdict {
        case .deliver(let room, let plainLength):
            counters.add(.delivered)
            return .media(room: room, ssrc: header.ssrc, plainLength: plainLength)
        case .refuse(let counter):
            counters.add(counter)
        case .complain(let room, let origin):
            counters.add(.authenticationFailed)
            complain(room: room, origin: origin)
        }
        return nil
    }

    /// The session to check a packet of the sender's session `number` under: the one in use, or a new one when
    /// the sender began a newer session (it replaces the old once a packet authenticates under it); nil for a
    /// packet of an older session than the one in use.
    private func inboundSession(
        _ current: (number: UInt64, session: SRTPSession)?, key: SessionKey, number: UInt64
    ) -> SRTPSession? {
        if let current, current.number == number { return current.session }
        if let current, number < current.number { return nil }
        let derived = RelayKeys.key(
            secret: secret, room: key.room, node: key.node, incarnation: key.incarnation, session: number)
        return try? SRTPSession(key: derived, direction: .inbound)
    }

    /// Writes the session number after the packet of `length` bytes; the new length.
    private static func appendSessionNumber(
        _ number: [UInt8], to buffer: UnsafeMutableRawBufferPointer, at length: Int
    ) -> Int {
        for (index, byte) in number.enumerated() { buffer[length + index] = byte }
        return length + number.count
    }

    /// The session number in the last 8 bytes before `end`.
    private static func sessionNumber(in buffer: UnsafeMutableRawBufferPointer, end: Int) -> UInt64 {
        (end - sessionNumberBytes..<end).reduce(UInt64(0)) { $0 << 8 | UInt64(buffer[$1]) }
    }

    private func complain(room: String, origin: RelayNode) {
        log(
            "relay: refused media from node \(origin.name) at \(origin.address) for room \(room): it does not "
                + "authenticate under this cluster's secret (the nodes' cluster secrets differ)")
    }

    /// Whether a refusal of `origin`'s media for `room` is to be logged now: once per node and room every 10 s.
    private static func shouldComplain(_ state: inout InboundState, room: String, origin: String) -> Bool {
        let now = MonotonicClock.milliseconds()
        let complaint = "\(origin)\0\(room)"
        if let last = state.lastComplaint[complaint], now - last < 10_000 { return false }
        state.lastComplaint[complaint] = now
        return true
    }

    /// Another node's keepalive: an SRTCP receiver report whose sender SSRC is a room's tag, from that node's
    /// relay socket, under its relay key for the room.
    private func keepalive(
        _ buffer: UnsafeMutableRawBufferPointer, length: Int, session number: UInt64, from sender: UDPAddress
    )
        -> RelayedDatagram?
    {
        enum Verdict {
            case accept(room: String, plainLength: Int)
            case refuse
            case complain(room: String, node: RelayNode)
        }
        let tag = UInt32(buffer[4]) << 24 | UInt32(buffer[5]) << 16 | UInt32(buffer[6]) << 8 | UInt32(buffer[7])
        let verdict = inbound.withLock { state -> Verdict in
            guard let origin = state.nodes.values.first(where: { $0.address == sender }),
                let candidates = state.roomTags[tag]
            else { return .refuse }
            var failedRoom: String?
            for room in candidates.sorted() where state.heard[RoomNode(room: room, node: origin.name)] != nil {
                let sessionKey = SessionKey(room: room, node: origin.name, incarnation: origin.incarnation)
                guard let session = inboundSession(state.sessions[sessionKey], key: sessionKey, number: number) else {
                    return .refuse
                }
                do throws(SRTPError) {
                    let plain = try session.unprotectRTCP(buffer, length: length)
                    state.sessions[sessionKey] = (number, session)
                    state.heard[RoomNode(room: room, node: origin.name)] = MonotonicClock.milliseconds()
                    return .accept(room: room, plainLength: plain)
                } catch .authenticationFailed {
                    failedRoom = room
                } catch {
                    return .refuse
                }
            }
            if let failedRoom, Self.shouldComplain(&state, room: failedRoom, origin: origin.name) {
                return .complain(room: failedRoom, node: origin)
            }
            return .refuse
        }
        switch verdict {
        case .accept(let room, let plainLength):
            guard
                let packets = try? RTCPPacket.parseCompound(
                    Array(UnsafeRawBufferPointer(rebasing: buffer[0..<plainLength])))
            else {
                counters.add(.keepaliveRefused)
                return nil
            }
            counters.add(.keepaliveReceived)
            var blocks: [RTCPReportBlock] = []
            for case .receiverReport(_, let reports) in packets { blocks += reports }
            return .loss(room: room, blocks)
        case .refuse:
            counters.add(.keepaliveRefused)
        case .complain(let room, let origin):
            counters.add(.keepaliveRefused)
            complain(room: room, origin: origin)
        }
        return nil
    }
}
