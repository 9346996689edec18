import Foundation
import MediaServer
import MediaTransport
import Platform
import RoomProtocol
import Synchronization

/// Another node of a room, as the relay sends to it and checks what comes from it.
public struct RelayNode: Sendable, Hashable {
    public var name: String
    public var incarnation: UInt64
    /// Its relay socket's address.
    public var address: UDPAddress

    public init(name: String, incarnation: UInt64, address: UDPAddress) {
        self.name = name
        self.incarnation = incarnation
        self.address = address
    }
}

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
    }

    private let sentCount = Atomic<Int>(0)
    private let deliveredCount = Atomic<Int>(0)
    private let malformedCount = Atomic<Int>(0)
    private let unknownCount = Atomic<Int>(0)
    private let wrongSourceCount = Atomic<Int>(0)
    private let notPermittedCount = Atomic<Int>(0)
    private let authenticationCount = Atomic<Int>(0)
    private let replayedCount = Atomic<Int>(0)

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

    private final class OutboundRoom {
        let session: SRTPSession
        var targets: [RelayNode] = []

        init(session: SRTPSession) { self.session = session }
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
        /// One session per room and sending incarnation.
        var sessions: [SessionKey: SRTPSession] = [:]
        var lastComplaint: [String: Int64] = [:]
    }

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

    /// The other nodes that have peers in `room` (this node left out): each local speaker's packets go to each.
    public func setRemoteNodes(_ nodes: [RelayNode], room: String) {
        let others = nodes.filter { $0.name != node }
        outbound.withLock { rooms in
            if others.isEmpty {
                rooms[room] = nil
                return
            }
            if rooms[room] == nil {
                let key = RelayKeys.key(secret: secret, room: room, node: node, incarnation: incarnation)
                guard let session = try? SRTPSession(key: key, direction: .outbound) else { return }
                rooms[room] = OutboundRoom(session: session)
            }
            rooms[room]?.targets = others
        }
        inbound.withLock { state in
            for other in others {
                if let old = state.nodes[other.name], old.incarnation != other.incarnation {
                    state.sessions = state.sessions.filter { $0.key.room != room || $0.key.node != other.name }
                }
                state.nodes[other.name] = other
            }
        }
    }

    /// A speaker of `room` whose home is node `node`: its packets are accepted from that node while `gate`
    /// (this node's copy of the speaker's permission) is open.
    public func addRemoteSpeaker(ssrc: UInt32, room: String, node: String, gate: PublishGate) {
        inbound.withLock { $0.speakers[ssrc] = RemoteSpeaker(room: room, node: node, gate: gate) }
    }

    public func removeRemoteSpeaker(ssrc: UInt32) {
        inbound.withLock { _ = $0.speakers.removeValue(forKey: ssrc) }
    }

    /// A node left the cluster: nothing more is sent to it or accepted from it.
    public func removeNode(_ name: String) {
        outbound.withLock { rooms in
            for room in rooms.values { room.targets.removeAll { $0.name == name } }
        }
        inbound.withLock { state in
            state.nodes[name] = nil
            state.speakers = state.speakers.filter { $0.value.node != name }
            state.sessions = state.sessions.filter { $0.key.node != name }
        }
    }

    /// Forgets a room: its relays in both directions stop.
    public func closeRoom(_ room: String) {
        outbound.withLock { _ = $0.removeValue(forKey: room) }
        inbound.withLock { state in
            state.speakers = state.speakers.filter { $0.value.room != room }
            state.sessions = state.sessions.filter { $0.key.room != room }
        }
    }

    // MARK: Outbound, on the forwarding thread

    public func forwarded(_ packet: UnsafeRawBufferPointer, room: String, ssrc: UInt32) {
        guard packet.count + SRTPSession.maxTrailer <= scratch.count else { return }
        outbound.withLock { rooms in
            guard let target = rooms[room], !target.targets.isEmpty else { return }
            scratch.copyMemory(from: packet)
            guard let length = try? target.session.protect(scratch, length: packet.count) else { return }
            let bytes = UnsafeRawBufferPointer(rebasing: scratch[0..<length])
            for remote in target.targets where socket.send(bytes, to: remote.address) {
                counters.add(.sent)
            }
        }
    }

    // MARK: Inbound, on the forwarding thread

    public var inboundSocket: UDPSocket { socket }

    public func relayed(
        _ buffer: UnsafeMutableRawBufferPointer, length: Int, from sender: UDPAddress
    ) -> (
        room: String, ssrc: UInt32, plainLength: Int
    )? {
        let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        // A datagram that fills the buffer may have been cut short: refused as too large.
        guard length >= 12, length < buffer.count, !RTCPPacket.isRTCP(packet), let header = try? RTPHeader.parse(packet)
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
            let session: SRTPSession
            if let existing = state.sessions[sessionKey] {
                session = existing
            } else {
                let key = RelayKeys.key(
                    secret: secret, room: speaker.room, node: origin.name, incarnation: origin.incarnation)
                guard let created = try? SRTPSession(key: key, direction: .inbound) else { return .refuse(.malformed) }
                state.sessions[sessionKey] = created
                session = created
            }
            do throws(SRTPError) {
                let plain = try session.unprotect(buffer, length: length)
                return .deliver(room: speaker.room, length: plain)
            } catch .authenticationFailed {
                let now = MonotonicClock.milliseconds()
                let complaint = "\(origin.name)\0\(speaker.room)"
                if let last = state.lastComplaint[complaint], now - last < 10_000 {
                    return .refuse(.authenticationFailed)
                }
                state.lastComplaint[complaint] = now
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
            return (room, header.ssrc, plainLength)
        case .refuse(let counter):
            counters.add(counter)
        case .complain(let room, let origin):
            counters.add(.authenticationFailed)
            log(
                "relay: refused media from node \(origin.name) at \(origin.address) for room \(room): it does not "
                    + "authenticate under this cluster's secret (the nodes' cluster secrets differ)")
        }
        return nil
    }
}
