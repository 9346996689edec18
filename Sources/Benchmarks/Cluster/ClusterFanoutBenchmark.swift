import BenchmarkSupport
import Foundation
import MediaRelay
import MediaServer
import MediaTransport
import MediaWire
import Platform
import RoomCore
import ServerBenchmarks
import Synchronization

/// `clubroom bench fanout --nodes N`: the fan-out bench of one server, against the same room served by N nodes
/// in this process, each a forwarder and a media relay on an address of its own (127.0.0.2, .3, ...), in the
/// same run and over the same sockets.
///
/// Speaker i and listener j are at home on node i mod N and j mod N; each node fans out to its own listeners,
/// and each speaker's packet crosses once to each other node through the relays (HMAC-derived keys, as in
/// `clubroom serve --cluster`). The one node and the cluster take turns in slices, like the raw and the real
/// forwarder of the single-node bench, so both see the same competition for the CPU.
///
/// - Capacity per CPU-second: datagrams read by the listeners in time per second of the forwarding threads'
///   CPU; for the cluster, every node's (which also does the node's relaying both ways).
/// - Relay hop: a second room, with one speaker at home on the first node and one listener on every node, no
///   other members, sends a probe packet every 20 ms through the loaded nodes. The kernel stamps each probe's
///   arrival at each listener; the hop is, per probe, the arrival on another node less the arrival on the
///   speaker's own node: what crossing the relay adds for a listener there. The one node serves the same
///   probe room (its speaker and as many listeners) during its own turns, so both sides do the same work.
///
/// The rig's threads (the speakers' sender, the listeners' reader, the probes) stand for other machines and run
/// under the idle policy (`RigThread`): the forwarders wait for a CPU only for each other.
public enum ClusterFanoutBenchmark {
    public struct Result: Sendable {
        public var nodes: Int
        public var speakers: Int
        public var listeners: Int
        public var seconds: Int
        public var offeredPerSecond: Double
        public var single: FanoutBenchmark.Figures
        public var cluster: FanoutBenchmark.Figures
        /// Per probe and remote node: its arrival there less its arrival on the speaker's node, in milliseconds.
        public var hopsMilliseconds: [Double]
        /// Per probe: from its sending to its arrival on the speaker's node, and on the other nodes, milliseconds.
        public var homeDeliveryMilliseconds: [Double]
        public var remoteDeliveryMilliseconds: [Double]
        /// Per probe and listener: from its sending to its arrival through the one node, milliseconds.
        public var singleDeliveryMilliseconds: [Double]
        public var probesSent: Int
        /// Probes expected on the other nodes that never arrived there.
        public var probesMissing: Int
        /// The relays' counters, summed over the nodes.
        public var relayCounters: [(name: String, value: Int)]
        /// The relays' log lines (a refusal would mean the bench's nodes disagree).
        public var relayLog: [String]
    }

    static let room = "bench"
    static let probeRoom = "probe"
    static let probeSSRC: UInt32 = 0x0F00_0001

    public static func run(nodes nodeCount: Int, speakers: Int, listeners: Int, seconds: Int) throws -> Result {
        FanoutBenchmark.raiseDescriptorLimit(to: speakers + listeners + 64 + 4 * nodeCount)
        let count = speakers + listeners
        let listenerSockets = try (0..<listeners).map { _ in
            try UDPSocket(binding: .loopback(port: 0), bufferBytes: 256 << 10)
        }
        let speakerSockets = try (0..<speakers).map { _ in
            try UDPSocket(binding: .loopback(port: 0), bufferBytes: 256 << 10)
        }
        func socket(_ index: Int) -> UDPSocket {
            index < listeners ? listenerSockets[index] : speakerSockets[index - listeners]
        }
        func home(_ index: Int) -> Int { index < listeners ? index % nodeCount : (index - listeners) % nodeCount }
        let rounds = 5
        let peers = try SyntheticPeers(speakers: speakers, listeners: listeners, rounds: rounds)
        let (ssrcs, keys, reports, uplinks) = (peers.ssrcs, peers.keys, peers.reports, peers.uplinks)

        // The one node. Its synthetic peers (and every node's below) bind with one prepared report each, without
        // the consent round trip a client makes.
        let single = try MediaForwarder(binding: .loopback(port: 0), bindsAtFirstPacket: true)
        single.start()
        single.setRoomKey(roomKey(0), epoch: 1, room: room)
        for index in 0..<count {
            single.add(
                MediaPeer(
                    room: room, peer: "p\(index)", ssrc: ssrcs[index], uplinkKey: keys[index],
                    gate: PublishGate(index >= listeners), webSocketSink: { _ in }))
        }

        // The cluster.
        let secret = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        let log = Mutex<[String]>([])
        var forwarders: [MediaForwarder] = []
        var relays: [MediaRelay] = []
        defer {
            for relay in relays { relay.stop() }
            for forwarder in forwarders { forwarder.stop() }
            single.stop()
            withExtendedLifetime((listenerSockets, speakerSockets)) {}
        }
        for node in 0..<nodeCount {
            let host = "127.0.0.\(node + 2)"
            guard let address = UDPAddress(host: host, port: 0) else {
                throw PlacedError(place: host, problem: "not an IPv4 address")
            }
            do {
                let forwarder = try MediaForwarder(binding: address, bindsAtFirstPacket: true)
                let relay = try MediaRelay(
                    node: "n\(node + 1)", incarnation: 1, secret: secret, binding: address, forwarder: forwarder,
                    log: { line in log.withLock { $0.append(line) } })
                forwarders.append(forwarder)
                relays.append(relay)
            } catch {
                throw PlacedError(
                    place: "bench", problem: "the nodes need \(host) on the loopback interface: \(error.description)")
            }
        }
        let relayNodes = relays.map(\.asRemoteNode)
        for (node, forwarder) in forwarders.enumerated() {
            forwarder.start()
            relays[node].start()
            forwarder.setRoomKey(roomKey(node + 1), epoch: 1, room: room)
            for index in 0..<count where home(index) == node {
                forwarder.add(
                    MediaPeer(
                        room: room, peer: "p\(index)", ssrc: ssrcs[index], uplinkKey: keys[index],
                        gate: PublishGate(index >= listeners), webSocketSink: { _ in }))
            }
            for index in listeners..<count where home(index) != node {
                relays[node].addRemoteSpeaker(
                    ssrc: ssrcs[index], room: room, node: relayNodes[home(index)].name, gate: PublishGate(true))
            }
            relays[node].setRemoteNodes(relayNodes, room: room)
        }

        // Binding every peer on the one node and on its node of the cluster.
        try bind(count: count, expected: count, socket: socket, reports: reports, to: { _ in single })
        try bind(count: count, expected: count, socket: socket, reports: reports, to: { forwarders[home($0)] })

        let probe = try Probe(forwarders: forwarders, relays: relays, nodes: relayNodes, listeners: nodeCount)
        defer { probe.stop() }
        // The same probe room on the one node, sent during its turns: the probes' work is the same on both sides.
        let singleProbe = try Probe(forwarders: [single], relays: nil, nodes: [], listeners: nodeCount)
        defer { singleProbe.stop() }

        FanoutBenchmark.drain(listenerSockets + speakerSockets)
        // The rig's readers stand aside: the nodes wait for the CPU only for each other, as on their own machines.
        let receivers = Receivers(listeners: listenerSockets, others: speakerSockets, standsAside: true)
        receivers.start()
        defer { receivers.stop() }
        let singleTarget = FanoutBenchmark.Target(
            addresses: Array(repeating: single.socket.localAddress, count: speakers), uplinks: uplinks,
            threads: { [single.forwardingThreadID] },
            counts: {
                (
                    single.counters.value(.received), single.counters.value(.sentDatagrams),
                    single.counters.value(.sendDropped)
                )
            })
        let clusterTarget = FanoutBenchmark.Target(
            addresses: (0..<speakers).map { forwarders[home(listeners + $0)].socket.localAddress }, uplinks: uplinks,
            threads: { forwarders.map(\.forwardingThreadID) },
            counts: {
                (
                    forwarders.reduce(0) { $0 + $1.counters.value(.received) },
                    forwarders.reduce(0) { $0 + $1.counters.value(.sentDatagrams) },
                    forwarders.reduce(0) { $0 + $1.counters.value(.sendDropped) }
                )
            })
        // This thread sends the speakers' packets: it stands aside too, while it does.
        RigThread.standAside()
        defer { RigThread.stepBack() }
        var singleTally = FanoutBenchmark.Tally()
        var clusterTally = FanoutBenchmark.Tally()
        var sequences = [UInt16](repeating: 0, count: speakers)
        var frame = 0
        var remaining = seconds
        var turn = 0
        while remaining > 0 {
            let slice = min(FanoutBenchmark.sliceSeconds, remaining)
            remaining -= slice
            // one, cluster, cluster, one, ...: neither always goes first.
            for clusterTurn in turn % 2 == 0 ? [false, true] : [true, false] {
                (clusterTurn ? probe : singleProbe).sending(true)
                let figures = FanoutBenchmark.measure(
                    target: clusterTurn ? clusterTarget : singleTarget, speakers: speakerSockets,
                    firstSSRC: ssrcs[listeners], listeners: listeners, receivers: receivers, seconds: slice,
                    sequences: &sequences, frame: &frame)
                (clusterTurn ? probe : singleProbe).sending(false)
                if clusterTurn {
                    clusterTally.add(figures)
                } else {
                    singleTally.add(figures)
                }
            }
            turn += 1
        }
        let probes = probe.finish()
        let singleProbes = singleProbe.finish()
        var relayTotals: [String: Int] = [:]
        for relay in relays {
            for counter in relay.counters.snapshot() { relayTotals[counter.name, default: 0] += counter.value }
        }
        return Result(
            nodes: nodeCount, speakers: speakers, listeners: listeners, seconds: seconds,
            offeredPerSecond: Double(speakers * listeners * 50), single: singleTally.figures(),
            cluster: clusterTally.figures(), hopsMilliseconds: probes.hops, homeDeliveryMilliseconds: probes.home,
            remoteDeliveryMilliseconds: probes.remote,
            singleDeliveryMilliseconds: singleProbes.home + singleProbes.remote,
            probesSent: probes.sent, probesMissing: probes.missing,
            relayCounters: RelayCounters.Name.allCases.map { ($0.rawValue, relayTotals[$0.rawValue] ?? 0) },
            relayLog: log.withLock { $0 })
    }

    /// Node n's key for a room (0 is the one node's).
    static func roomKey(_ node: Int) -> SRTPKey {
        SRTPKey(bytes: (0..<30).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ node &* 101) })!
    }

    /// Sends every peer's binding report to the forwarder `forwarder(index)` until `expected` bindings are counted
    /// over them, resending what the kernel dropped.
    static func bind(
        count: Int, expected: Int, socket: (Int) -> UDPSocket, reports: [[[UInt8]]],
        to forwarder: (Int) -> MediaForwarder
    ) throws {
        let targets = Dictionary(grouping: 0..<count) { ObjectIdentifier(forwarder($0)) }
        func bound() -> Int { targets.values.reduce(0) { $0 + forwarder($1[0]).counters.value(.bindings) } }
        for round in 0..<reports[0].count where bound() < expected {
            for index in 0..<count {
                socket(index).send(reports[index][round], to: forwarder(index).socket.localAddress)
                if index % 32 == 31 { usleep(2000) }
            }
            let deadline = Date().addingTimeInterval(2)
            while bound() < expected, Date() < deadline { usleep(10_000) }
        }
        guard bound() >= expected else {
            throw PlacedError(place: "bench", problem: "only \(bound()) of \(expected) peers bound")
        }
    }

    public struct ProbeFigures: Sendable {
        var hops: [Double] = []
        var home: [Double] = []
        var remote: [Double] = []
        var sent = 0
        var missing = 0
    }

    /// The probe room: its speaker at home on node 0 sends every 20 ms while its side has its turn; `listeners`
    /// listeners, one on each node (with `relays`) or all on the one forwarder (without), their sockets stamped
    /// by the kernel on arrival, read every 5 ms.
    final class Probe: @unchecked Sendable {
        // Safe to share: the sockets and sessions are each used by one thread (the sender's or the reader's);
        // the records are behind a mutex, the flags are atomics.
        private let speaker: UDPSocket
        private let uplink: SRTPSession
        private let listenerSockets: [UDPSocket]
        private let target: UDPAddress
        private let active = Atomic<Bool>(false)
        private let running = Atomic<Bool>(true)
        private let finished = DispatchSemaphore(value: 0)
        /// Sending time per sequence number, and arrival time per node and sequence number (monotonic ns).
        private let records = Mutex<(sent: [UInt16: Int64], arrived: [[UInt16: Int64]])>(([:], []))

        init(forwarders: [MediaForwarder], relays: [MediaRelay]?, nodes: [RelayNode], listeners: Int) throws {
            let speakerKey = SRTPKey(bytes: (0..<30).map { UInt8(truncatingIfNeeded: 200 &+ $0) })!
            speaker = try UDPSocket(binding: .loopback(port: 0))
            uplink = try SRTPSession(key: speakerKey, direction: .outbound)
            target = forwarders[0].socket.localAddress
            var sockets: [UDPSocket] = []
            for (node, forwarder) in forwarders.enumerated() {
                forwarder.setRoomKey(ClusterFanoutBenchmark.roomKey(50 + node), epoch: 1, room: probeRoom)
                if node == 0 {
                    forwarder.add(
                        MediaPeer(
                            room: probeRoom, peer: "probe-speaker", ssrc: probeSSRC, uplinkKey: speakerKey,
                            gate: PublishGate(true), webSocketSink: { _ in }))
                }
                if let relays {
                    if node > 0 {
                        relays[node].addRemoteSpeaker(
                            ssrc: probeSSRC, room: probeRoom, node: nodes[0].name, gate: PublishGate(true))
                    }
                    relays[node].setRemoteNodes(nodes, room: probeRoom)
                }
            }
            for listener in 0..<listeners {
                let forwarder = forwarders[relays == nil ? 0 : listener]
                let socket = try UDPSocket(binding: .loopback(port: 0), bufferBytes: 256 << 10)
                guard socket.stampArrivals() else {
                    throw PlacedError(place: "bench", problem: "the kernel does not stamp arrivals")
                }
                sockets.append(socket)
                let listenerKey = SRTPKey(bytes: (0..<30).map { UInt8(truncatingIfNeeded: 150 &+ listener &+ $0) })!
                forwarder.add(
                    MediaPeer(
                        room: probeRoom, peer: "probe\(listener)", ssrc: probeSSRC + 1 + UInt32(listener),
                        uplinkKey: listenerKey, gate: PublishGate(false), webSocketSink: { _ in }))
                // Bound by a report, like every listener; the speaker by its own.
                let session = try SRTPSession(key: listenerKey, direction: .outbound)
                let report = try session.protect(
                    RTCPPacket.receiverReport(ssrc: probeSSRC + 1 + UInt32(listener), reports: []).bytes(),
                    rtcp: true)
                let before = forwarder.counters.value(.bindings)
                socket.send(report, to: forwarder.socket.localAddress)
                guard waitUntil({ forwarder.counters.value(.bindings) > before }) else {
                    throw PlacedError(place: "bench", problem: "the probe listener \(listener + 1) did not bind")
                }
            }
            listenerSockets = sockets
            let report = try uplink.protect(
                RTCPPacket.receiverReport(ssrc: probeSSRC, reports: []).bytes(), rtcp: true)
            let before = forwarders[0].counters.value(.bindings)
            speaker.send(report, to: target)
            guard waitUntil({ forwarders[0].counters.value(.bindings) > before }) else {
                throw PlacedError(place: "bench", problem: "the probe speaker did not bind")
            }
            records.withLock { $0.arrived = Array(repeating: [:], count: listeners) }
            startThread(named: "bench-sender") { [self] in send() }
            startThread(named: "bench-reader") { [self] in read() }
        }

        func sending(_ on: Bool) { active.store(on, ordering: .relaxed) }

        private func send() {
            RigThread.standAside()
            var sequence: UInt16 = 0
            let payload = [UInt8](repeating: 0x33, count: 70)
            var next = MonotonicClock.nanoseconds()
            while running.load(ordering: .relaxed) {
                next += 20_000_000
                MonotonicClock.sleep(untilNanoseconds: next)
                guard active.load(ordering: .relaxed) else { continue }
                sequence &+= 1
                let packet = RTPHeader(
                    payloadType: 111, sequenceNumber: sequence, timestamp: UInt32(sequence) &* 960, ssrc: probeSSRC
                ).packet(extensionElements: [.audioLevel(RTPAudioLevel(level: 30, voice: true))], payload: payload)
                guard let bytes = try? uplink.protect(packet) else { continue }
                let now = MonotonicClock.nanoseconds()
                records.withLock { $0.sent[sequence] = now }
                speaker.send(bytes, to: target)
            }
            finished.signal()
        }

        private func read() {
            RigThread.standAside()
            let batch = ReceiveBatch(capacity: 8, slotSize: 2048)
            while running.load(ordering: .relaxed) {
                for (node, socket) in listenerSockets.enumerated() {
                    while true {
                        let received = batch.receiveStamped(from: socket)
                        let now = MonotonicClock.nanoseconds()
                        for index in 0..<received where batch.length(index) >= 12 {
                            // SRTP leaves the RTP header in the clear: the sequence number names the probe.
                            let slot = batch.slot(index)
                            let sequence = UInt16(slot[2]) << 8 | UInt16(slot[3])
                            let arrival = now - batch.ageMicroseconds(index) * 1000
                            records.withLock { $0.arrived[node][sequence] = arrival }
                        }
                        if received < batch.capacity { break }
                    }
                }
                usleep(5000)
            }
            finished.signal()
        }

        func stop() {
            guard running.exchange(false, ordering: .relaxed) else { return }
            finished.wait()
            finished.wait()
        }

        /// Stops the threads (after a last 100 ms for the probes in flight) and works out the figures.
        func finish() -> ProbeFigures {
            sending(false)
            usleep(100_000)
            stop()
            return records.withLock { records in
                var figures = ProbeFigures()
                figures.sent = records.sent.count
                for (sequence, sent) in records.sent {
                    let home = records.arrived[0][sequence]
                    if let home { figures.home.append(Double(home - sent) / 1e6) }
                    for node in 1..<records.arrived.count {
                        guard let arrival = records.arrived[node][sequence] else {
                            figures.missing += 1
                            continue
                        }
                        figures.remote.append(Double(arrival - sent) / 1e6)
                        if let home { figures.hops.append(Double(arrival - home) / 1e6) }
                    }
                }
                return figures
            }
        }
    }

    static func waitUntil(_ condition: () -> Bool) -> Bool {
        for _ in 0..<200 {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}

extension ClusterFanoutBenchmark {
    /// Runs the benchmark and shapes its figures into the shared report.
    public static func report(nodes: Int, speakers: Int, listeners: Int, seconds: Int) throws -> BenchmarkReport {
        let result = try run(nodes: nodes, speakers: speakers, listeners: listeners, seconds: seconds)
        let ratio =
            result.single.capacityPerCPUSecond > 0
            ? result.cluster.capacityPerCPUSecond / result.single.capacityPerCPUSecond : 0
        var rows: [BenchmarkReport.Row] = [
            .init("offered load", result.offeredPerSecond, "datagrams/s"),
            .init("one node: forwarded", result.single.forwardedPerSecond, "datagrams/s"),
            .init("one node: loss", result.single.lossFraction * 100, "%"),
            .init("one node: forwarding CPU", result.single.cpuFraction * 100, "% of a core"),
            .init("one node: capacity", result.single.capacityPerCPUSecond, "datagrams/CPU-s"),
            .init("\(nodes) nodes: forwarded", result.cluster.forwardedPerSecond, "datagrams/s"),
            .init("\(nodes) nodes: loss", result.cluster.lossFraction * 100, "%"),
            .init("\(nodes) nodes: forwarding CPU (all nodes)", result.cluster.cpuFraction * 100, "% of a core"),
            .init("\(nodes) nodes: capacity", result.cluster.capacityPerCPUSecond, "datagrams/CPU-s"),
            .init("capacity ratio to one node", ratio, "×", target: 0.95, goal: .atLeast),
            .init("relay hop p50", percentile(result.hopsMilliseconds, 0.5), "ms"),
            .init("relay hop p99", percentile(result.hopsMilliseconds, 0.99), "ms", target: 1),
            .init("relay hop max", result.hopsMilliseconds.max() ?? 0, "ms"),
            .init("probe to its speaker's node: p50", percentile(result.homeDeliveryMilliseconds, 0.5), "ms"),
            .init("probe to its speaker's node: p99", percentile(result.homeDeliveryMilliseconds, 0.99), "ms"),
            .init("probe to the other nodes: p50", percentile(result.remoteDeliveryMilliseconds, 0.5), "ms"),
            .init("probe to the other nodes: p99", percentile(result.remoteDeliveryMilliseconds, 0.99), "ms"),
            .init("probe through one node: p50", percentile(result.singleDeliveryMilliseconds, 0.5), "ms"),
            .init("probe through one node: p99", percentile(result.singleDeliveryMilliseconds, 0.99), "ms"),
            .init("probes sent", Double(result.probesSent), "packets"),
            .init("probes missing on the other nodes", Double(result.probesMissing), "packets"),
            .init("relay log lines", Double(result.relayLog.count), "lines", target: 0),
        ]
        for counter in result.relayCounters {
            rows.append(.init("relays: \(counter.name)", Double(counter.value), "packets"))
        }
        for (name, figures) in [("one node", result.single), ("\(nodes) nodes", result.cluster)] {
            rows += [
                .init("\(name): late (after the grace)", figures.lateFraction * 100, "%"),
                .init("\(name): never arrived", figures.droppedFraction * 100, "%"),
                .init("\(name): waiting for a CPU", figures.waitFraction * 100, "% of the time"),
                .init("\(name): whole process CPU", figures.processCPUFraction * 100, "% of a core"),
                .init("\(name): handed to the kernel", Double(figures.legs.forwarderSent), "datagrams"),
                .init("\(name): refused to the forwarders", Double(figures.legs.forwarderSendDropped), "datagrams"),
                .init("\(name): UDP receive-queue drops", Double(figures.kernel.udpReceiveBufferErrors), "datagrams"),
                .init("\(name): kernel backlog drops", Double(figures.kernel.backlogDropped), "packets"),
                .init("\(name): kernel receive squeezes", Double(figures.kernel.squeezed), "times"),
            ]
        }
        return BenchmarkReport(
            name:
                "fanout across \(nodes) nodes: \(speakers) speakers × \(listeners) listeners, \(result.seconds) s"
                + " per side",
            rows: rows,
            notes: [
                buildNote,
                "the same load through one forwarder and through \(nodes) nodes on 127.0.0.2-\(nodes + 1) (forwarder and"
                    + " relay each, in this process), taking turns in slices of up to 2 s",
                "speaker i and listener j at home on node i mod \(nodes) and j mod \(nodes); each speaker's packet"
                    + " crosses once to each other node",
                "capacity = datagrams read by listeners in time per second of the forwarding threads' CPU (a node's"
                    + " also relays)",
                "relay hop = per probe (a room of its own: one speaker on node 1, one listener per node, every 20 ms"
                    + " during the nodes' turns), its kernel-stamped arrival on another node less that on node 1",
                "the one node serves the same probe room (its speaker and \(nodes) listeners) during its turns",
                "the rig's threads (speakers, listeners' reader, probes) run under the idle policy: they stand for"
                    + " other machines, and take only the CPU the forwarders leave",
                "SRTP: libsrtp2, its AES-CM and HMAC-SHA1 from \(SRTPLibrary.cryptography.rawValue)",
            ] + result.relayLog.prefix(3).map { "relay: " + $0 })
    }
}
