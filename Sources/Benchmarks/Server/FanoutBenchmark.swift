import BenchmarkSupport
import Foundation
import MediaServer
import MediaTransport
import MediaWire
import Platform
import Synchronization

/// `clubroom bench fanout`: S speakers sending 20 ms packets of about 100 bytes to L listeners through the real
/// forwarder (SRTP on), and, over the same sockets and load, through a minimal forwarder that only receives and
/// sends (the kernel's ceiling). Everything runs in this process; the receivers only count.
///
/// The two forwarders take turns in slices of up to two seconds (raw, real, real, raw, ...), so that on a shared
/// machine both see the same competition for the CPU. After each slice the run waits for the forwarder to catch
/// up, so a slice's late datagrams are told apart from lost ones and never spill into the next slice.
public enum FanoutBenchmark {
    /// What one forwarder did over all its slices.
    public struct Figures: Sendable {
        /// Datagrams the listeners read within half a second of the end of each slice, per second of sending.
        public var forwardedPerSecond: Double = 0
        /// Datagrams not read within that half second: late or lost (for live audio both are lost).
        public var lossFraction: Double = 0
        /// Datagrams that arrived only after that half second (the forwarder had fallen behind).
        public var lateFraction: Double = 0
        /// Datagrams that never arrived.
        public var droppedFraction: Double = 0
        /// The forwarding thread's CPU time over wall time (1.0 is one core).
        public var cpuFraction: Double = 0
        /// Time the forwarding thread was ready to run but waited for a CPU, over wall time.
        public var waitFraction: Double = 0
        /// The receiving thread's CPU time over wall time (the rig, not the server).
        public var receiverCPUFraction: Double = 0
        /// The whole process's CPU time over wall time (forwarder, receivers, senders).
        public var processCPUFraction: Double = 0
        /// Where datagrams went, leg by leg.
        public var legs = Legs()
        /// The kernel's drop counters over the slices (the whole machine's, not only this run's).
        public var kernel = KernelNetCounters()
        /// Forwarded datagrams per second of forwarding-thread CPU: what one core could forward.
        public var capacityPerCPUSecond: Double { cpuFraction > 0 ? forwardedPerSecond / cpuFraction : 0 }
    }

    /// Counts along the path of the datagrams, to tell which leg lost them.
    public struct Legs: Sendable {
        /// Packets the speakers sent, and how many of those sends the kernel refused.
        public var speakerPackets = 0
        public var speakerSendFailures = 0
        /// Speakers' packets the forwarder read by the end of each slice's half second of grace.
        public var reachedForwarderInTime = 0
        /// ... and by the end of the catch-up.
        public var reachedForwarder = 0
        /// Datagrams the forwarder handed to the kernel for listeners, and those the kernel refused.
        public var forwarderSent = 0
        public var forwarderSendDropped = 0
        /// Datagrams the listeners read in time, and in all.
        public var listenerDatagramsInTime = 0
        public var listenerDatagrams = 0
    }

    public struct Result: Sendable {
        public var speakers: Int
        public var listeners: Int
        public var seconds: Int
        public var offeredPerSecond: Double
        public var forwarder: Figures
        public var raw: Figures
        /// Forwarder state per listener (SRTP session, statistics, tables), from the resident set.
        public var bytesPerListener: Double
        public var counters: [(name: String, value: Int)]
    }

    /// A failure to set the benchmark up.
    public struct SetupError: Error, CustomStringConvertible {
        public var description: String
    }

    /// How long each forwarder's turn lasts at most, in seconds.
    package static let sliceSeconds = 2
    /// How long after a slice's last packet the listeners' datagrams still count as in time.
    static let graceMicroseconds: UInt32 = 500_000

    public static func run(speakers: Int, listeners: Int, seconds: Int) throws -> Result {
        raiseDescriptorLimit(to: speakers + listeners + 64)
        let roomKey = SRTPKey(bytes: (0..<30).map { UInt8($0 &* 7) })!
        let listenerSockets = try (0..<listeners).map { _ in
            try UDPSocket(binding: .loopback(port: 0), bufferBytes: 256 << 10)
        }
        let speakerSockets = try (0..<speakers).map { _ in
            try UDPSocket(binding: .loopback(port: 0), bufferBytes: 256 << 10)
        }
        let count = speakers + listeners
        let rounds = 5
        let peers = try SyntheticPeers(speakers: speakers, listeners: listeners, rounds: rounds)
        let (ssrcs, keys, reports, uplinks) = (peers.ssrcs, peers.keys, peers.reports, peers.uplinks)

        let raw = try RawForwarder(listeners: listenerSockets.map(\.localAddress))
        raw.start()
        let residentBefore = ProcessSample.residentBytes()
        // The synthetic peers bind with one prepared report each, without the consent round trip a client makes.
        let forwarder = try MediaForwarder(binding: .loopback(port: 0), bindsAtFirstPacket: true)
        forwarder.start()
        defer {
            forwarder.stop()
            raw.stop()
            // The sockets stay open until both forwarders have stopped: a datagram to a closed one is an ICMP error.
            withExtendedLifetime((listenerSockets, speakerSockets)) {}
        }
        forwarder.setRoomKey(roomKey, epoch: 1, room: "bench")
        for index in 0..<count {
            forwarder.add(
                MediaPeer(
                    room: "bench", peer: "p\(index)", ssrc: ssrcs[index], uplinkKey: keys[index],
                    gate: PublishGate(index >= listeners), webSocketSink: { _ in }))
        }
        for round in 0..<rounds where forwarder.counters.value(.bindings) < count {
            for index in 0..<count {
                let socket = index < listeners ? listenerSockets[index] : speakerSockets[index - listeners]
                socket.send(reports[index][round], to: forwarder.socket.localAddress)
                if index % 32 == 31 { usleep(2000) }
            }
            let deadline = Date().addingTimeInterval(2)
            while forwarder.counters.value(.bindings) < count, Date() < deadline { usleep(10_000) }
        }
        guard forwarder.counters.value(.bindings) == count else {
            throw SetupError(description: "only \(forwarder.counters.value(.bindings)) of \(count) peers bound")
        }
        let residentAfter = ProcessSample.residentBytes()
        drain(listenerSockets + speakerSockets)

        let receivers = Receivers(listeners: listenerSockets, others: speakerSockets)
        receivers.start()
        defer { receivers.stop() }
        let rawTarget = Target(
            addresses: Array(repeating: raw.socket.localAddress, count: speakers), uplinks: nil,
            threads: { [raw.threadID.load(ordering: .relaxed)] },
            counts: {
                (
                    raw.received.load(ordering: .relaxed), raw.sent.load(ordering: .relaxed),
                    raw.dropped.load(ordering: .relaxed)
                )
            })
        let realTarget = Target(
            addresses: Array(repeating: forwarder.socket.localAddress, count: speakers), uplinks: uplinks,
            threads: { [forwarder.forwardingThreadID] },
            counts: {
                (
                    forwarder.counters.value(.received), forwarder.counters.value(.sentDatagrams),
                    forwarder.counters.value(.sendDropped)
                )
            })
        var rawTally = Tally()
        var realTally = Tally()
        var sequences = [UInt16](repeating: 0, count: speakers)
        var frame = 0
        var remaining = seconds
        var turn = 0
        while remaining > 0 {
            let slice = min(sliceSeconds, remaining)
            remaining -= slice
            // raw, real, real, raw, raw, real, ...: neither forwarder always goes first.
            for rawTurn in turn % 2 == 0 ? [true, false] : [false, true] {
                let target = rawTurn ? rawTarget : realTarget
                let figures = measure(
                    target: target, speakers: speakerSockets, firstSSRC: UInt32(0x1000 + listeners),
                    listeners: listeners, receivers: receivers, seconds: slice, sequences: &sequences, frame: &frame)
                if rawTurn { rawTally.add(figures) } else { realTally.add(figures) }
            }
            turn += 1
        }
        return Result(
            speakers: speakers, listeners: listeners, seconds: seconds,
            offeredPerSecond: Double(speakers * listeners * 50), forwarder: realTally.figures(),
            raw: rawTally.figures(),
            bytesPerListener: Double(max(0, residentAfter - residentBefore)) / Double(max(1, count)),
            counters: forwarder.counters.snapshot())
    }

    /// One of the forwarders (or a cluster of them), as the load sees it.
    package struct Target {
        /// Where each speaker sends.
        var addresses: [UDPAddress]
        /// The speakers' SRTP sessions (nil: the raw forwarder takes the packets as they are).
        var uplinks: [SRTPSession]?
        /// The threads whose CPU time is the forwarding's.
        var threads: () -> [Int]
        /// Speakers' packets read, datagrams handed to the kernel, datagrams the kernel refused.
        var counts: () -> (received: Int, sent: Int, dropped: Int)

        package init(
            addresses: [UDPAddress], uplinks: [SRTPSession]?, threads: @escaping () -> [Int],
            counts: @escaping () -> (received: Int, sent: Int, dropped: Int)
        ) {
            self.addresses = addresses
            self.uplinks = uplinks
            self.threads = threads
            self.counts = counts
        }
    }

    /// One slice's raw counts.
    package struct Slice {
        var sendingNanoseconds: UInt64 = 0
        var expected = 0
        var legs = Legs()
        var forwarder = ThreadTimes()
        var receivers = ThreadTimes()
        var processCPU: UInt64 = 0
        var kernel = KernelNetCounters()
    }

    /// The sum of a forwarder's slices.
    package struct Tally {
        var total = Slice()

        package init() {}

        package mutating func add(_ slice: Slice) {
            total.sendingNanoseconds += slice.sendingNanoseconds
            total.expected += slice.expected
            total.legs.speakerPackets += slice.legs.speakerPackets
            total.legs.speakerSendFailures += slice.legs.speakerSendFailures
            total.legs.reachedForwarderInTime += slice.legs.reachedForwarderInTime
            total.legs.reachedForwarder += slice.legs.reachedForwarder
            total.legs.forwarderSent += slice.legs.forwarderSent
            total.legs.forwarderSendDropped += slice.legs.forwarderSendDropped
            total.legs.listenerDatagramsInTime += slice.legs.listenerDatagramsInTime
            total.legs.listenerDatagrams += slice.legs.listenerDatagrams
            total.forwarder.cpu += slice.forwarder.cpu
            total.forwarder.waiting += slice.forwarder.waiting
            total.receivers.cpu += slice.receivers.cpu
            total.processCPU += slice.processCPU
            total.kernel = total.kernel.adding(slice.kernel)
        }

        package func figures() -> Figures {
            let seconds = Double(max(1, total.sendingNanoseconds)) / 1e9
            let expected = Double(max(1, total.expected))
            let legs = total.legs
            return Figures(
                forwardedPerSecond: Double(legs.listenerDatagramsInTime) / seconds,
                lossFraction: max(0, Double(total.expected - legs.listenerDatagramsInTime)) / expected,
                lateFraction: Double(max(0, legs.listenerDatagrams - legs.listenerDatagramsInTime)) / expected,
                droppedFraction: max(0, Double(total.expected - legs.listenerDatagrams)) / expected,
                cpuFraction: Double(total.forwarder.cpu) / 1e9 / seconds,
                waitFraction: Double(total.forwarder.waiting) / 1e9 / seconds,
                receiverCPUFraction: Double(total.receivers.cpu) / 1e9 / seconds,
                processCPUFraction: Double(total.processCPU) / 1e9 / seconds, legs: legs, kernel: total.kernel)
        }
    }

    /// One slice: the speakers send 50 packets a second each for `seconds`, spread evenly over each 20 ms frame;
    /// then half a second of grace, then the wait for the forwarder to catch up.
    package static func measure(
        target: Target, speakers: [UDPSocket], firstSSRC: UInt32, listeners: Int, receivers: Receivers, seconds: Int,
        sequences: inout [UInt16], frame: inout Int
    ) -> Slice {
        let countsBefore = target.counts()
        let kernelBefore = KernelNetCounters.read()
        let threads = target.threads()
        let forwarderBefore = threads.map { ThreadTimes.read(thread: $0) }
        let receiversBefore = ThreadTimes.read(thread: receivers.threadID.load(ordering: .relaxed))
        let processBefore = MonotonicClock.processCPUNanoseconds()
        let listenedBefore = receivers.received.load(ordering: .relaxed)
        let payload = [UInt8](repeating: 0x5A, count: 70)
        var failures = 0
        var sent = 0
        let start = MonotonicClock.nanoseconds()
        let slots = seconds * 50 * speakers.count
        for slot in 0..<slots {
            MonotonicClock.sleep(untilNanoseconds: start + Int64(slot) * 20_000_000 / Int64(speakers.count))
            let index = slot % speakers.count
            if index == 0 { frame += 1 }
            sequences[index] &+= 1
            let packet = RTPHeader(
                payloadType: 111, sequenceNumber: sequences[index], timestamp: UInt32(truncatingIfNeeded: frame * 960),
                ssrc: firstSSRC + UInt32(index)
            ).packet(extensionElements: [.audioLevel(RTPAudioLevel(level: 30, voice: true))], payload: payload)
            let bytes = (try? target.uplinks?[index].protect(packet)) ?? packet
            if !speakers[index].send(bytes, to: target.addresses[index]) { failures += 1 }
            sent += 1
        }
        // The last packet's due time plus one slot: what the slice lasted for the load.
        let sending = UInt64(slots) * 20_000_000 / UInt64(speakers.count)
        usleep(graceMicroseconds)
        let inTime = receivers.received.load(ordering: .relaxed) - listenedBefore
        let reachedInTime = target.counts().received - countsBefore.received
        let forwarderAfter = threads.map { ThreadTimes.read(thread: $0) }
        let receiversAfter = ThreadTimes.read(thread: receivers.threadID.load(ordering: .relaxed))
        let processAfter = MonotonicClock.processCPUNanoseconds()
        // Catch-up: until the forwarder has read every packet and the listeners' count has stopped moving.
        var last = -1
        let deadline = MonotonicClock.nanoseconds() + 20_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            let now = receivers.received.load(ordering: .relaxed)
            if now == last, target.counts().received - countsBefore.received >= sent { break }
            last = now
            usleep(100_000)
        }
        let countsAfter = target.counts()
        let legs = Legs(
            speakerPackets: sent, speakerSendFailures: failures, reachedForwarderInTime: reachedInTime,
            reachedForwarder: countsAfter.received - countsBefore.received,
            forwarderSent: countsAfter.sent - countsBefore.sent,
            forwarderSendDropped: countsAfter.dropped - countsBefore.dropped, listenerDatagramsInTime: inTime,
            listenerDatagrams: receivers.received.load(ordering: .relaxed) - listenedBefore)
        return Slice(
            sendingNanoseconds: sending, expected: sent * listeners, legs: legs,
            forwarder: zip(forwarderAfter, forwarderBefore).map { $0.since($1) }.reduce(ThreadTimes()) {
                ThreadTimes(cpu: $0.cpu + $1.cpu, waiting: $0.waiting + $1.waiting)
            }, receivers: receiversAfter.since(receiversBefore),
            processCPU: UInt64(processAfter - processBefore), kernel: KernelNetCounters.read().since(kernelBefore))
    }

    package static func drain(_ sockets: [UDPSocket]) {
        let batch = ReceiveBatch(capacity: 64, slotSize: 256)
        for socket in sockets { while batch.receive(from: socket) > 0 {} }
    }

    package static func raiseDescriptorLimit(to wanted: Int) {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < rlim_t(wanted) {
            limit.rlim_cur = min(limit.rlim_max, rlim_t(wanted))
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}

/// The listeners' side of the rig: one thread that visits every listener socket in turn, reads what it holds
/// with recvmmsg, and sleeps 20 ms between passes.
///
/// Nobody waits on the sockets, so the kernel delivers each datagram without waking anyone: with a thread
/// blocked in epoll_wait, every delivery ran the epoll callback and a wake-up on the forwarding thread, which
/// cost it over a quarter of its time, and the receivers spent theirs switching in and out. A pass over 1,300
/// sockets takes a few milliseconds and finds about three datagrams on each (one syscall reads them all); the sockets' 512 KiB queues hold
/// hundreds, so nothing overflows between passes (the kernel's RcvbufErrors says so).
package final class Receivers: @unchecked Sendable {
    // Safe to share: the thread owns the sockets' reading and the batch; the rest are atomics.
    private let listeners: [UDPSocket]
    /// Sockets that are read but not counted (the speakers also receive each other).
    private let others: [UDPSocket]
    let received = Atomic<Int>(0)
    let threadID = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    /// Whether the thread runs under the idle policy (see `RigThread`).
    private let standsAside: Bool

    package init(listeners: [UDPSocket], others: [UDPSocket], standsAside: Bool = false) {
        self.listeners = listeners
        self.others = others
        self.standsAside = standsAside
    }

    package func start() {
        running.store(true, ordering: .relaxed)
        startThread(named: "bench-listen") { [self] in
            threadID.store(MediaForwarder.currentThreadID(), ordering: .relaxed)
            if standsAside { RigThread.standAside() }
            let batch = ReceiveBatch(capacity: 8, slotSize: 256)
            while running.load(ordering: .relaxed) {
                var got = 0
                for socket in listeners {
                    while true {
                        let count = batch.receive(from: socket)
                        got += count
                        if count < batch.capacity { break }
                    }
                }
                if got > 0 { received.add(got, ordering: .relaxed) }
                for socket in others { while batch.receive(from: socket) == batch.capacity {} }
                usleep(20_000)
            }
            stopped.signal()
        }
        while threadID.load(ordering: .relaxed) == 0 { usleep(1000) }
    }

    package func stop() {
        running.store(false, ordering: .relaxed)
        stopped.wait()
    }
}

/// The kernel's ceiling: receive a batch, send each datagram unchanged to every listener. No parsing, no
/// crypto, no checks; the same sockets and batch sizes as the real forwarder.
final class RawForwarder: @unchecked Sendable {
    // Safe to share: the thread owns the batches; the counters and flags are atomics.
    let socket: UDPSocket
    private let listeners: [UDPAddress]
    private let running = Atomic<Bool>(false)
    let threadID = Atomic<Int>(0)
    /// Speakers' packets read, datagrams handed to the kernel, datagrams it refused.
    let received = Atomic<Int>(0)
    let sent = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    private let stopped = DispatchSemaphore(value: 0)

    init(listeners: [UDPAddress]) throws {
        socket = try UDPSocket(binding: .loopback(port: 0), bufferBytes: 8 << 20)
        self.listeners = listeners
    }

    func start() {
        running.store(true, ordering: .relaxed)
        startThread(named: "bench-relay") { [self] in
            threadID.store(MediaForwarder.currentThreadID(), ordering: .relaxed)
            let receive = ReceiveBatch(capacity: 64, slotSize: 1500)
            let send = SendBatch(capacity: 256)
            while running.load(ordering: .relaxed) {
                _ = socket.waitReadable(timeoutMilliseconds: 50)
                let count = receive.receive(from: socket)
                for index in 0..<count where receive.length(index) > 1 {
                    let bytes = UnsafeRawBufferPointer(rebasing: receive.slot(index)[0..<receive.length(index)])
                    for listener in listeners { send.append(bytes, to: listener, on: socket) }
                    // Counted as they go, like the real forwarder's counters, so a lagging turn shows.
                    received.add(1, ordering: .relaxed)
                    sent.add(listeners.count, ordering: .relaxed)
                }
                send.flush(on: socket)
                dropped.store(send.dropped, ordering: .relaxed)
            }
            stopped.signal()
        }
    }

    func stop() {
        running.store(false, ordering: .relaxed)
        socket.send([0], to: socket.localAddress)
        stopped.wait()
    }
}

/// The kernel's network counters that say where datagrams are dropped, read from /proc. They cover the whole
/// network namespace, so other work on the machine shows in them too.
public struct KernelNetCounters: Sendable {
    /// Packets the per-CPU backlog (net.core.netdev_max_backlog) refused: softnet_stat's second column, all CPUs.
    public var backlogDropped = 0
    /// Times the receive softirq ran out of budget with work left (softnet_stat's third column).
    public var squeezed = 0
    public var udpNoPorts = 0
    public var udpInErrors = 0
    /// Datagrams dropped because the receiving socket's queue was full.
    public var udpReceiveBufferErrors = 0
    public var udpSendBufferErrors = 0

    public static func read() -> KernelNetCounters {
        var counters = KernelNetCounters()
        if let text = try? String(contentsOfFile: "/proc/net/softnet_stat", encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ").map { Int($0, radix: 16) ?? 0 }
                guard fields.count > 2 else { continue }
                counters.backlogDropped += fields[1]
                counters.squeezed += fields[2]
            }
        }
        if let text = try? String(contentsOfFile: "/proc/net/snmp", encoding: .utf8) {
            let lines = text.split(separator: "\n").filter { $0.hasPrefix("Udp: ") }
            if lines.count >= 2 {
                for (name, value) in zip(lines[0].split(separator: " "), lines[1].split(separator: " ")) {
                    let number = Int(value) ?? 0
                    switch name {
                    case "NoPorts": counters.udpNoPorts = number
                    case "InErrors": counters.udpInErrors = number
                    case "RcvbufErrors": counters.udpReceiveBufferErrors = number
                    case "SndbufErrors": counters.udpSendBufferErrors = number
                    default: break
                    }
                }
            }
        }
        return counters
    }

    /// What changed from `earlier` to this reading.
    public func since(_ earlier: KernelNetCounters) -> KernelNetCounters {
        KernelNetCounters(
            backlogDropped: backlogDropped - earlier.backlogDropped, squeezed: squeezed - earlier.squeezed,
            udpNoPorts: udpNoPorts - earlier.udpNoPorts, udpInErrors: udpInErrors - earlier.udpInErrors,
            udpReceiveBufferErrors: udpReceiveBufferErrors - earlier.udpReceiveBufferErrors,
            udpSendBufferErrors: udpSendBufferErrors - earlier.udpSendBufferErrors)
    }

    func adding(_ other: KernelNetCounters) -> KernelNetCounters {
        KernelNetCounters(
            backlogDropped: backlogDropped + other.backlogDropped, squeezed: squeezed + other.squeezed,
            udpNoPorts: udpNoPorts + other.udpNoPorts, udpInErrors: udpInErrors + other.udpInErrors,
            udpReceiveBufferErrors: udpReceiveBufferErrors + other.udpReceiveBufferErrors,
            udpSendBufferErrors: udpSendBufferErrors + other.udpSendBufferErrors)
    }
}
