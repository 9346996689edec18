import AudioCore
import Foundation
import MediaTransport
import MediaWire
import Platform
import Synchronization

/// The cluster's media relay, as the forwarder drives it on the forwarding thread: it sees each speaker packet
/// the forwarder accepted, in plain RTP, and sends it on to the room's other nodes; and the forwarder waits on
/// its socket beside its own, hands it what other nodes relayed, and fans out what it lets through. Neither
/// call may keep the buffer or block.
public protocol MediaRelayTap: AnyObject, Sendable {
    func forwarded(_ packet: UnsafeRawBufferPointer, room: String, ssrc: UInt32)
    /// The socket other nodes relay to.
    var inboundSocket: UDPSocket { get }
    /// A datagram from `inboundSocket`, in `buffer` (with room for a trailer after `length`): checked and
    /// unprotected in place. Media to fan out, another node's keepalive with its listeners' loss of this node's
    /// speakers, or nil when refused.
    func relayed(_ buffer: UnsafeMutableRawBufferPointer, length: Int, from sender: UDPAddress) -> RelayedDatagram?
    /// A local listener's reception report on `block.ssrc`, a speaker of `room` that is not at home here: the
    /// relay carries the worst such loss back to the speaker's node in its next keepalive. True when the SSRC is
    /// such a speaker (so the report also counts towards the listener's own network quality).
    @discardableResult
    func listenerLoss(_ block: RTCPReportBlock, room: String) -> Bool
    /// Called on every turn of the forwarding loop (at least every 50 ms): sends the keepalives that are due.
    func tick()
}

/// What the relay let through from another node.
public enum RelayedDatagram: Sendable, Equatable {
    /// A remote speaker's packet, unprotected in place: fanned out to the room's listeners here.
    case media(room: String, ssrc: UInt32, plainLength: Int)
    /// A keepalive: for each speaker of this node it names, the worst loss among that node's listeners.
    case loss(room: String, [RTCPReportBlock])
}

/// A peer's media settings, from the room server to the forwarder.
public struct MediaPeer: Sendable {
    public var room: String
    public var peer: String
    /// The SSRC the server assigned to this peer's connection; its packets must carry it.
    public var ssrc: UInt32
    /// The key this peer protects its packets with (only this peer and the server hold it).
    public var uplinkKey: SRTPKey
    /// Whether the peer may publish now; shared with the room authority.
    public var gate: PublishGate
    /// Sends bytes to this peer over its WebSocket, for the fallback path. Called on the forwarding thread.
    public var webSocketSink: @Sendable ([UInt8]) -> Void

    public init(
        room: String, peer: String, ssrc: UInt32, uplinkKey: SRTPKey, gate: PublishGate,
        webSocketSink: @escaping @Sendable ([UInt8]) -> Void
    ) {
        self.room = room
        self.peer = peer
        self.ssrc = ssrc
        self.uplinkKey = uplinkKey
        self.gate = gate
        self.webSocketSink = webSocketSink
    }
}

/// The media forwarder: receives each speaker's SRTP once, checks and unprotects it with the speaker's key,
/// protects it once with the room's key, and sends the same bytes to every listener of the room with
/// sendmmsg. See docs/media.md.
///
/// Threads: one forwarding thread owns the socket's receive side and all forwarding state. Other threads talk
/// to it through `inbox` (a short lock, taken once per loop turn) and the peers' `PublishGate`s (atomics read
/// per packet). The unchecked sendability rests on that split: everything else is touched by the forwarding
/// thread only.
public final class MediaForwarder: @unchecked Sendable {
    /// The socket media arrives on and leaves from.
    public let socket: UDPSocket
    public let counters = MediaCounters()
    /// The rooms where a speaker's sequence numbers wrapped under the current key (see ``takeWrapped(_:)``).
    private let wrappedRooms = Mutex<Set<String>>([])
    /// The SSRC of the server's own RTCP reports (and UDP probe answers).
    public let serverSSRC: UInt32

    /// Called on the forwarding thread with a room's active speakers and their levels (0–100), at most every
    /// 250 ms and only when they changed.
    let onSpeakers: @Sendable (_ room: String, _ levels: [(peer: String, level: Int)]) -> Void
    /// Called on the forwarding thread every half second with what was measured of each peer of a room that has
    /// reported or gone silent (see ``LinkMeasures``).
    let onQuality: @Sendable (_ room: String, _ measures: [(peer: String, measures: LinkMeasures)]) -> Void
    private let inbox = Mutex<[Command]>([])
    private let running = Atomic<Bool>(false)
    private let threadID = Atomic<Int>(0)
    private let stopped = DispatchSemaphore(value: 0)

    private enum Command: Sendable {
        case addPeer(MediaPeer)
        case removePeer(ssrc: UInt32)
        case roomKey(room: String, key: SRTPKey, epoch: Int)
        case closeRoom(String)
        case webSocketPacket(ssrc: UInt32, bytes: [UInt8])
        case takesRED(ssrc: UInt32)
        case attachRelay((any MediaRelayTap)?)
    }

    enum Path: Equatable {
        case none
        case udp(UDPAddress)
        case webSocket
    }

    // Forwarding-thread state.
    var peers: [UInt32: PeerState] = [:]
    var rooms: [String: RoomState] = [:]
    private let receive: ReceiveBatch
    let send = SendBatch(capacity: 256)
    /// Whether the relay's socket is read before the media socket in this turn of the loop (they alternate).
    private var relayFirst = false
    /// Packets being fanned out, in turns between reads of the sockets.
    let fanouts = FanOutQueue(slots: 256, slotSize: 1500 + SRTPSession.maxTrailer)
    private let scratch: UnsafeMutableRawBufferPointer
    /// Where a packet's copy for the listeners who take RED is protected, beside the one for the others.
    private let redScratch: UnsafeMutableRawBufferPointer
    /// The media socket and the relay's, for `poll` (kept, so a turn of the loop allocates nothing).
    private let pollSet: UnsafeMutablePointer<pollfd>
    var lastSpeakerPoll: Int64 = 0
    var lastQualityPoll: Int64 = 0
    var lastConsentSweep: Int64 = 0
    /// Whether a flow is bound at its first authenticated packet, without a consent check (see `init`).
    let bindsAtFirstPacket: Bool
    /// How long media keeps going to a silent address (`consentLifetimeMilliseconds` but in tests).
    let consentLifetime: Int64
    /// When the thread's current run of fan-out turns began, or its last `shareTheCPU` (monotonic ns); nil while
    /// nothing is queued.
    private var busySince: Int64?
    /// The batch's drops already added to `counters`.
    private var countedDrops = 0
    /// Sees every accepted speaker packet, to relay it to other nodes (see MediaRelay).
    var relay: (any MediaRelayTap)?
    /// Where `wake` sends: the socket's own address, or 127.0.0.1 when it listens on every address. A socket
    /// bound to one address (a node on 127.0.0.3, a server on its public address) hears nothing sent to
    /// 127.0.0.1, and its commands and relayed packets would wait for the poll's 50 ms timeout.
    let wakeAddress: UDPAddress

    /// How long media keeps going to an address nothing authenticated came from (RFC 7675's consent lifetime).
    public static let consentLifetimeMilliseconds: Int64 = 30_000
    /// At most one consent nonce a second per peer, so at most one move a second, and a spoofed flood of reports
    /// gets the spoofed address one small packet a second.
    public static let challengeIntervalMilliseconds: Int64 = 1_000

    /// Binds the media socket; `start` begins forwarding. `bindsAtFirstPacket` skips the consent check: a flow
    /// goes where its first authenticated packet came from. Only for benchmarks whose thousands of synthetic peers
    /// share sockets and send one prepared report each; a server always checks consent. `consentLifetime` (ms) is
    /// shorter only in tests.
    public init(
        binding address: UDPAddress, serverSSRC: UInt32 = UInt32.random(in: 1...0x7FFF_FFFF) << 1,
        bindsAtFirstPacket: Bool = false, consentLifetime: Int64 = MediaForwarder.consentLifetimeMilliseconds,
        onSpeakers: @escaping @Sendable (_ room: String, _ levels: [(peer: String, level: Int)]) -> Void = { _, _ in },
        onQuality: @escaping @Sendable (_ room: String, _ measures: [(peer: String, measures: LinkMeasures)]) -> Void =
            { _, _ in }
    ) throws(UDPError) {
        self.bindsAtFirstPacket = bindsAtFirstPacket
        self.consentLifetime = consentLifetime
        socket = try UDPSocket(binding: address, bufferBytes: 8 << 20)
        let bound = socket.localAddress
        wakeAddress = bound.ipv4 == 0 ? .loopback(port: bound.port) : bound
        self.serverSSRC = serverSSRC
        self.onSpeakers = onSpeakers
        self.onQuality = onQuality
        receive = ReceiveBatch(capacity: 64, slotSize: 1500 + SRTPSession.maxTrailer)
        scratch = .allocate(byteCount: 1500 + SRTPSession.maxTrailer, alignment: 16)
        redScratch = .allocate(byteCount: 1500 + SRTPSession.maxTrailer, alignment: 16)
        pollSet = .allocate(capacity: 2)
        pollSet.initialize(repeating: pollfd(), count: 2)
    }

    deinit {
        scratch.deallocate()
        redScratch.deallocate()
        pollSet.deallocate()
    }

    /// Starts the forwarding thread.
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        startThread(named: "clubroom-fwd") { [self] in run() }
    }

    /// Stops the forwarding thread and waits for it.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake()
        stopped.wait()
    }

    // MARK: Commands from the room server

    /// Adds a peer to its room's media (the room must have a key first).
    public func add(_ peer: MediaPeer) { post(.addPeer(peer)) }

    /// Removes a peer: its packets are no longer accepted and it no longer receives any.
    public func removePeer(ssrc: UInt32) { post(.removePeer(ssrc: ssrc)) }

    /// Sets a room's downlink key: packets leave protected with it from the next one on.
    public func setRoomKey(_ key: SRTPKey, epoch: Int, room: String) {
        post(.roomKey(room: room, key: key, epoch: epoch))
    }

    /// The peer takes RFC 2198 redundancy (it said so in `media_path`): from the next packet on it gets the
    /// room's packets as their speakers sent them, RED or not, under each speaker's RED SSRC (see
    /// ``redSSRC(_:)``); until then, and for everyone else, a RED packet is cut to its primary frame.
    public func setTakesRED(ssrc: UInt32) { post(.takesRED(ssrc: ssrc)) }

    /// The SSRC under which listeners that take RED get `ssrc`'s packets: its own SRTP stream under the room key,
    /// since a RED packet and the primary cut from it are different bytes under the same sequence number, which
    /// one stream could not carry without using its keystream twice. Assigned SSRCs are even; this is the odd one
    /// beside it, which nobody is assigned.
    public static func redSSRC(_ ssrc: UInt32) -> UInt32 { ssrc | 1 }

    /// Forgets a room and its peers.
    public func closeRoom(_ room: String) { post(.closeRoom(room)) }

    /// Whether a speaker's sequence numbers wrapped in `room` since the last call, which it clears (any thread).
    /// Under one key, SRTP counts each stream's wraps (its rollover counter); someone who gets the key later
    /// cannot know how many there were and takes them for none, so no packet of that stream opens for them. A
    /// new key starts every stream at none: the server gives one before anyone joins a room where this is true.
    public func takeWrapped(_ room: String) -> Bool {
        wrappedRooms.withLock { $0.remove(room) != nil }
    }

    /// A packet a peer sent over its WebSocket (the fallback path): handled like a UDP datagram.
    public func receivedOverWebSocket(_ bytes: [UInt8], ssrc: UInt32) {
        post(.webSocketPacket(ssrc: ssrc, bytes: bytes))
    }

    /// Hands every packet a local speaker sends, once accepted and unprotected, to `tap` (on the forwarding
    /// thread), which relays it to the other nodes of its room; and reads `tap`'s socket on the forwarding
    /// thread, fanning out to this node's listeners what other nodes relayed and `tap` let through. nil detaches.
    public func attach(_ tap: (any MediaRelayTap)?) { post(.attachRelay(tap)) }

    private func post(_ command: Command) {
        inbox.withLock { $0.append(command) }
        wake()
    }

    /// An empty datagram to our own socket ends the wait in `poll`.
    private func wake() {
        var byte: UInt8 = 0
        withUnsafeBytes(of: &byte) { bytes in
            _ = socket.send(
                UnsafeRawBufferPointer(rebasing: bytes[0..<0]), to: wakeAddress)
        }
    }

    // MARK: The forwarding thread

    private func run() {
        threadID.store(Self.currentThreadID(), ordering: .relaxed)
        // Short slices: when the thread shares a CPU, it waits a tenth of a millisecond for it, not a few.
        ThreadSlice.request(nanoseconds: Self.threadSliceNanoseconds)
        while running.load(ordering: .acquiring) {
            // Which sockets have something: with a relay, both are waited on together, and only those that
            // have something are read (a node wakes for other nodes' packets more often than for its own). While
            // fan-outs are in progress this only looks, between their turns.
            let timeout: Int32 = fanouts.isEmpty ? 50 : 0
            if fanouts.isEmpty { busySince = nil }
            let mediaReadable: Bool
            var relayReadable = false
            if let relay {
                pollSet[0] = pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
                pollSet[1] = pollfd(fd: relay.inboundSocket.fileDescriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(pollSet, 2, timeout)
                mediaReadable = pollSet[0].revents != 0
                relayReadable = pollSet[1].revents != 0
            } else {
                mediaReadable = socket.waitReadable(timeoutMilliseconds: timeout)
            }
            // A batch is read only when the queue has a slot for each of its packets; until then they wait in the
            // socket's queue. With a relay, the two sockets take turns at going first, so that neither waits for
            // the other's packets to leave slots free.
            relayFirst.toggle()
            if relayFirst, relayReadable, fanouts.available >= receive.capacity, let relay {
                drainInbox()
                handleRelayed(from: relay)
            }
            let received = mediaReadable && fanouts.available >= receive.capacity ? receive.receive(from: socket) : 0
            // Commands are drained after the datagrams are read: a command posted before a peer's packet was sent
            // (adding that peer, say) is then always in force when the packet is handled.
            drainInbox()
            if received > 0 {
                for index in 0..<received {
                    let length = receive.length(index)
                    guard length > 0 else { continue }
                    handle(receive.slot(index), length: length, from: .udp(receive.sender(index)), viaSSRC: nil)
                }
                // What points into the batch (answers to reports) goes before the batch is read into again.
                flush()
            }
            if !relayFirst, relayReadable, fanouts.available >= receive.capacity, let relay {
                handleRelayed(from: relay)
            }
            if !fanouts.isEmpty {
                turnOfFanOuts()
                shareTheCPU()
            }
            relay?.tick()
            pollSpeakers()
            pollQuality()
            sweepConsent()
        }
        fanouts.removeAll()
        stopped.signal()
    }

    /// Once the thread has been fanning out for `busyRunNanoseconds` without sleeping, lets a thread that waits for
    /// its CPU run (sched_yield). The kernel takes the CPU from a busy thread only at a wake-up or at its
    /// scheduler tick (every 4 ms at 250 Hz), whatever slice the thread asked for; and a thread waiting for a CPU
    /// is already awake. Without this, a node sharing a CPU with another busy node (or any busy process) waited
    /// for that one's whole burst of fan-outs before it read its sockets. With nobody waiting, the call returns at
    /// once (a fraction of a microsecond each quarter of a millisecond).
    private func shareTheCPU() {
        let now = MonotonicClock.nanoseconds()
        guard let since = busySince else {
            busySince = now
            return
        }
        guard now - since >= Self.busyRunNanoseconds else { return }
        sched_yield()
        counters.add(.yields)
        busySince = MonotonicClock.nanoseconds()
    }

    private func drainInbox() {
        let commands = inbox.withLock { commands -> [Command] in
            defer { commands.removeAll(keepingCapacity: true) }
            return commands
        }
        for command in commands {
            switch command {
            case .addPeer(let info):
                guard let room = rooms[info.room] else { continue }
                let state = PeerState(info, at: Self.milliseconds())
                if let old = peers[info.ssrc] { rooms[old.info.room]?.members[info.ssrc] = nil }
                peers[info.ssrc] = state
                room.members[info.ssrc] = state
            case .removePeer(let ssrc):
                guard let state = peers.removeValue(forKey: ssrc), let room = rooms[state.info.room] else { continue }
                fanouts.remove(listener: ssrc)
                room.members[ssrc] = nil
                room.lastSequence[ssrc] = nil
                room.activity.remove(ssrc)
                room.listenersChanged = true
            case .roomKey(let name, let key, let epoch):
                guard let downlink = try? SRTPSession(key: key, direction: .outbound) else { continue }
                if let room = rooms[name] {
                    room.downlink = downlink
                    room.epoch = epoch
                } else {
                    rooms[name] = RoomState(name: name, downlink: downlink, epoch: epoch)
                }
            case .closeRoom(let name):
                wrappedRooms.withLock { _ = $0.remove(name) }
                guard let room = rooms.removeValue(forKey: name) else { continue }
                for ssrc in room.members.keys {
                    peers[ssrc] = nil
                    fanouts.remove(listener: ssrc)
                }
            case .webSocketPacket(let ssrc, let bytes):
                counters.add(.webSocketIn)
                guard bytes.count + SRTPSession.maxTrailer <= scratch.count else {
                    counters.add(.malformed)
                    continue
                }
                scratch.copyBytes(from: bytes)
                handle(scratch, length: bytes.count, from: .webSocket, viaSSRC: ssrc)
                // The scratch buffer is reused for the next packet: send what refers to it now.
                flush()
            case .attachRelay(let tap):
                relay = tap
            case .takesRED(let ssrc):
                guard let peer = peers[ssrc], !peer.takesRED else { continue }
                peer.takesRED = true
                rooms[peer.info.room]?.listenersChanged = true
            }
        }
    }

    /// What other nodes relayed: each datagram the relay lets through, fanned out to this node's listeners of its
    /// room, read on this thread straight from the relay's socket (no hand-over between threads).
    private func handleRelayed(from relay: any MediaRelayTap) {
        let received = receive.receive(from: relay.inboundSocket)
        for index in 0..<received {
            let buffer = receive.slot(index)
            switch relay.relayed(buffer, length: receive.length(index), from: receive.sender(index)) {
            case .media(let name, let ssrc, let plainLength):
                guard let room = rooms[name] else { continue }
                fanOut(buffer, plainLength: plainLength, in: room, from: ssrc)
            case .loss(let name, let blocks):
                // Other nodes' listeners count like local ones: the speaker's next report carries the worst.
                for block in blocks {
                    guard let speaker = peers[block.ssrc], speaker.info.room == name else { continue }
                    speaker.downstreamLoss = max(speaker.downstreamLoss, block.fractionLost)
                }
            case nil:
                continue
            }
        }
        flush()
    }

    /// One turn of the fan-outs in progress (see FanOutQueue).
    private func turnOfFanOuts() {
        // Counted before the batch goes, so a listener that has its datagram sees it counted.
        counters.add(.sentDatagrams, fanouts.turn(into: send, on: socket))
        flush()
        fanouts.endTurn()
    }

    /// Sends what is batched and counts what the kernel would not take.
    private func flush() {
        send.flush(on: socket)
        if send.dropped > countedDrops {
            counters.add(.sendDropped, send.dropped - countedDrops)
            countedDrops = send.dropped
        }
    }

    /// One packet from a peer, in `buffer` (which has room for the SRTP trailer after `length`).
    private func handle(_ buffer: UnsafeMutableRawBufferPointer, length: Int, from source: Path, viaSSRC: UInt32?) {
        let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        if RTCPPacket.isRTCP(packet) {
            handleRTCP(buffer, length: length, from: source, viaSSRC: viaSSRC)
            return
        }
        counters.add(.received)
        let header: RTPHeader
        do {
            header = try RTPHeader.parse(packet)
        } catch {
            counters.add(.malformed)
            return
        }
        guard let peer = peers[header.ssrc], viaSSRC == nil || viaSSRC == header.ssrc,
            let room = rooms[peer.info.room]
        else {
            counters.add(.unknownSSRC)
            return
        }
        // Checked first and on every packet, before any crypto: a demoted or muted peer is cut off at once.
        guard peer.info.gate.isOpen else {
            counters.add(.notPermitted)
            return
        }
        let plainLength: Int
        do {
            plainLength = try peer.uplink().unprotect(buffer, length: length)
        } catch {
            count(error)
            return
        }
        let now = Self.milliseconds()
        heard(peer, from: source, in: room, at: now)
        peer.lastActivity = now
        let verdict = peer.statistics.record(
            ssrc: header.ssrc, sequence: header.sequenceNumber, timestamp: header.timestamp, arrival: now &* 48)
        if verdict == .lateOrDuplicate { peer.late += 1 }
        do {
            let plain = UnsafeRawBufferPointer(rebasing: buffer[0..<plainLength])
            if let level = try RTPOneByteExtension.audioLevel(in: plain, header: header) {
                room.activity.record(header.ssrc, dBov: level.level, at: now)
            }
        } catch {
            counters.add(.badExtension)
        }
        // A RED payload whose blocks do not fit is a dropped packet, here and on every other node.
        guard Self.redPayload(UnsafeRawBufferPointer(rebasing: buffer[0..<plainLength])) != nil else {
            counters.add(.malformed)
            return
        }
        relay?.forwarded(
            UnsafeRawBufferPointer(rebasing: buffer[0..<plainLength]), room: peer.info.room, ssrc: header.ssrc)
        fanOut(buffer, plainLength: plainLength, in: room, from: header.ssrc)
    }

    /// Keeps a speaker's newest sequence number, and notes the room when it wrapped: a step forward (less than
    /// half the range, modulo 2^16) to a smaller number. A packet that comes late (a step back) changes nothing.
    private func noteSequence(_ sequence: UInt16, of ssrc: UInt32, in room: RoomState) {
        guard let last = room.lastSequence[ssrc] else {
            room.lastSequence[ssrc] = sequence
            return
        }
        let step = sequence &- last
        guard step != 0, step < 0x8000 else { return }
        room.lastSequence[ssrc] = sequence
        if sequence < last { wrappedRooms.withLock { _ = $0.insert(room.name) } }
    }

    /// The packet's header and, when its payload type is RED, its blocks; nil when the header or the RED
    /// payload is malformed.
    static func redPayload(_ plain: UnsafeRawBufferPointer) -> (header: RTPHeader, red: REDPayload?)? {
        guard let header = try? RTPHeader.parse(plain) else { return nil }
        guard header.payloadType == RTPAudioProfile.redPayloadType else { return (header, nil) }
        guard
            let red = try? REDPayload.parse(
                UnsafeRawBufferPointer(rebasing: plain[header.payloadRange]), redPayloadType: header.payloadType)
        else { return nil }
        return (header, red)
    }

    /// Protects a plain packet with the room's key and queues it for every listener but its speaker: once as
    /// it came, under the speaker's RED SSRC, for the listeners who take RED; once with a RED payload cut to its
    /// primary frame, under the speaker's SSRC, for the others. A room whose listeners are all of one kind costs
    /// one protect per packet, as before.
    private func fanOut(
        _ buffer: UnsafeMutableRawBufferPointer, plainLength: Int, in room: RoomState, from ssrc: UInt32
    ) {
        noteSequence(UInt16(buffer[2]) << 8 | UInt16(buffer[3]), of: ssrc, in: room)
        guard let parsed = Self.redPayload(UnsafeRawBufferPointer(rebasing: buffer[0..<plainLength])) else {
            counters.add(.malformed)
            return
        }
        if room.listenersChanged { room.rebuildListeners() }
        var forwarded = false
        if room.takesRED.hasListeners {
            redScratch.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[0..<plainLength]))
            redScratch[11] |= 1  // the RED SSRC: see redSSRC(_:)
            forwarded = send(redScratch, plainLength: plainLength, to: room.takesRED, in: room, from: ssrc)
        }
        if room.primaryOnly.hasListeners || !forwarded {
            let length =
                parsed.red.map {
                    REDPayload.stripToPrimary(buffer, length: plainLength, header: parsed.header, red: $0)
                } ?? plainLength
            forwarded = send(buffer, plainLength: length, to: room.primaryOnly, in: room, from: ssrc) || forwarded
        }
        if forwarded { counters.add(.forwardedPackets) }
    }

    /// Protects `buffer` with the room's key and queues it for `listeners` but the speaker; false when the
    /// protect failed.
    private func send(
        _ buffer: UnsafeMutableRawBufferPointer, plainLength: Int, to listeners: RoomState.Listeners,
        in room: RoomState, from ssrc: UInt32
    ) -> Bool {
        let protectedLength: Int
        do {
            protectedLength = try room.downlink.protect(buffer, length: plainLength)
        } catch {
            count(error)
            return false
        }
        let out = UnsafeRawBufferPointer(rebasing: buffer[0..<protectedLength])
        // Every slot taken (WebSocket packets, as commands, can bring more than a batch): turns of the packets
        // ahead free one, and this packet queues behind them, so a speaker's packets keep their order. An empty
        // queue always has room: its slots are as large as any buffer a packet is handled in.
        while !fanouts.enqueue(out, to: listeners.udp, exceptFor: ssrc), !fanouts.isEmpty { turnOfFanOuts() }
        if !listeners.webSocket.isEmpty {
            let bytes = Array(out)
            for listener in listeners.webSocket where listener.ssrc != ssrc {
                listener.sink(bytes)
                counters.add(.webSocketOut)
            }
        }
        return true
    }

    func count(_ error: SRTPError) {
        switch error {
        case .authenticationFailed: counters.add(.authenticationFailed)
        case .replayed: counters.add(.replayed)
        case .badLength, .library: counters.add(.srtpOther)
        }
    }

    /// The time slice the forwarding thread asks the kernel for (Linux 6.12 and later; see docs/media.md).
    public static let threadSliceNanoseconds: UInt64 = 100_000

    /// How long the forwarding thread fans out without sleeping before it lets a thread waiting for its CPU run.
    static let busyRunNanoseconds: Int64 = 250_000

    /// The forwarding thread's kernel thread ID, once it runs (for benchmarks, which read its CPU and wait times).
    public var forwardingThreadID: Int { threadID.load(ordering: .relaxed) }

    /// The calling thread's kernel thread ID, from /proc/thread-self ("pid/task/tid"); 0 if unreadable.
    public static func currentThreadID() -> Int {
        var link = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &link, link.count - 1)
        guard length > 0 else { return 0 }
        let text = String(decoding: link[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "/").last.flatMap { Int($0) } ?? 0
    }

    static func milliseconds() -> Int64 {
        MonotonicClock.milliseconds()
    }
}
