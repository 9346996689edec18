import Foundation
import MediaTransport
import RoomProtocol
import Synchronization

/// `clubroom bench fanout`: S speakers sending 20 ms packets of about 100 bytes to L listeners through the real
/// forwarder (SRTP on), and, over the same sockets and load, through a minimal forwarder that only receives and
/// sends (the kernel's ceiling). Everything runs in this process; the receivers only count.
public enum FanoutBenchmark {
    /// What one run measured.
    public struct Figures: Sendable {
        public var forwardedPerSecond: Double
        public var lossFraction: Double
        /// The forwarding thread's CPU time over wall time (1.0 is one core).
        public var cpuFraction: Double
        /// Forwarded datagrams per second of forwarding-thread CPU: what one core could forward.
        public var capacityPerCPUSecond: Double { cpuFraction > 0 ? forwardedPerSecond / cpuFraction : 0 }
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
        let ssrcs = (0..<count).map { UInt32(0x1000 + $0) }
        let keys = (0..<count).map { index in
            SRTPKey(bytes: (0..<30).map { UInt8(truncatingIfNeeded: $0 &+ index &* 31) })!
        }
        // Binding reports are protected before measuring, so their sessions are not counted as the server's.
        // Several per peer (each with its own SRTCP index), for the rounds that resend what the kernel dropped.
        let rounds = 5
        let reports = try (0..<count).map { index -> [[UInt8]] in
            let session = try SRTPSession(key: keys[index], direction: .outbound)
            let report = RTCPPacket.receiverReport(ssrc: ssrcs[index], reports: []).bytes()
            return try (0..<rounds).map { _ in try session.protect(report, rtcp: true) }
        }
        let uplinks = try (0..<speakers).map { try SRTPSession(key: keys[listeners + $0], direction: .outbound) }

        // The minimal forwarder first, over the same listeners.
        let raw = try RawForwarder(listeners: listenerSockets.map(\.localAddress))
        raw.start()
        let rawFigures = measure(
            target: raw.socket.localAddress, speakers: speakerSockets, uplinks: nil, listeners: listenerSockets,
            seconds: seconds, cpu: { raw.cpuSeconds })
        raw.stop()

        let residentBefore = residentBytes()
        let forwarder = try MediaForwarder(binding: .loopback(port: 0))
        forwarder.start()
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
            forwarder.stop()
            throw SetupError(description: "only \(forwarder.counters.value(.bindings)) of \(count) peers bound")
        }
        let residentAfter = residentBytes()
        drain(listenerSockets + speakerSockets)
        let figures = measure(
            target: forwarder.socket.localAddress, speakers: speakerSockets, uplinks: uplinks,
            listeners: listenerSockets,
            seconds: seconds, cpu: { forwarder.forwardingCPUSeconds })
        let counters = forwarder.counters.snapshot()
        forwarder.stop()
        return Result(
            speakers: speakers, listeners: listeners, seconds: seconds,
            offeredPerSecond: Double(speakers * listeners * 50), forwarder: figures, raw: rawFigures,
            bytesPerListener: Double(max(0, residentAfter - residentBefore)) / Double(max(1, count)),
            counters: counters)
    }

    /// Sends 50 packets a second per speaker for `seconds`, counts what the listeners receive.
    static func measure(
        target: UDPAddress, speakers: [UDPSocket], uplinks: [SRTPSession]?, listeners: [UDPSocket], seconds: Int,
        cpu: () -> Double
    ) -> Figures {
        let received = Atomic<Int>(0)
        let receiving = Atomic<Bool>(true)
        let threads = 2
        let finished = DispatchSemaphore(value: 0)
        for thread in 0..<threads {
            let mine = stride(from: thread, to: listeners.count, by: threads).map { listeners[$0] }
            let worker = Thread {
                let batch = ReceiveBatch(capacity: 64, slotSize: 256)
                while receiving.load(ordering: .relaxed) {
                    var got = 0
                    for socket in mine { got += batch.receive(from: socket) }
                    if got == 0 { usleep(200) } else { received.add(got, ordering: .relaxed) }
                }
                finished.signal()
            }
            worker.start()
        }
        let payload = [UInt8](repeating: 0x5A, count: 70)
        var sequences = [UInt16](repeating: 0, count: speakers.count)
        let cpuStart = cpu()
        let start = DispatchTime.now().uptimeNanoseconds
        var sent = 0
        var tick = 0
        while true {
            let due = start + UInt64(tick) * 20_000_000
            let now = DispatchTime.now().uptimeNanoseconds
            if now < due { usleep(UInt32((due - now) / 1000)) }
            if tick >= seconds * 50 { break }
            for (index, socket) in speakers.enumerated() {
                sequences[index] &+= 1
                let packet = RTPHeader(
                    payloadType: 111, sequenceNumber: sequences[index], timestamp: UInt32(tick) * 960,
                    ssrc: UInt32(0x1000 + listeners.count + index)
                ).packet(extensionElements: [.audioLevel(RTPAudioLevel(level: 30, voice: true))], payload: payload)
                let bytes = (try? uplinks?[index].protect(packet)) ?? packet
                socket.send(bytes, to: target)
                sent += 1
            }
            tick += 1
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        usleep(500_000)
        let cpuUsed = cpu() - cpuStart
        receiving.store(false, ordering: .relaxed)
        for _ in 0..<threads { finished.wait() }
        let expected = sent * listeners.count
        let got = received.load(ordering: .relaxed)
        return Figures(
            forwardedPerSecond: Double(got) / elapsed,
            lossFraction: expected > 0 ? max(0, Double(expected - got) / Double(expected)) : 0,
            cpuFraction: cpuUsed / elapsed)
    }

    static func drain(_ sockets: [UDPSocket]) {
        let batch = ReceiveBatch(capacity: 64, slotSize: 256)
        for socket in sockets { while batch.receive(from: socket) > 0 {} }
    }

    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static func raiseDescriptorLimit(to wanted: Int) {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < rlim_t(wanted) {
            limit.rlim_cur = min(limit.rlim_max, rlim_t(wanted))
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}

/// The kernel's ceiling: receive a batch, send each datagram unchanged to every listener. No parsing, no
/// crypto, no checks; the same sockets and batch sizes as the real forwarder.
final class RawForwarder: @unchecked Sendable {
    // Safe to share: the thread owns the batches; the flags are atomics.
    let socket: UDPSocket
    private let listeners: [UDPAddress]
    private let running = Atomic<Bool>(false)
    private let cpu = Atomic<UInt64>(0)
    private let stopped = DispatchSemaphore(value: 0)

    init(listeners: [UDPAddress]) throws {
        socket = try UDPSocket(binding: .loopback(port: 0), bufferBytes: 8 << 20)
        self.listeners = listeners
    }

    var cpuSeconds: Double { Double(cpu.load(ordering: .relaxed)) / 1e9 }

    func start() {
        running.store(true, ordering: .relaxed)
        let thread = Thread { [self] in
            let receive = ReceiveBatch(capacity: 64, slotSize: 1500)
            let send = SendBatch(capacity: 256)
            while running.load(ordering: .relaxed) {
                _ = socket.waitReadable(timeoutMilliseconds: 50)
                let count = receive.receive(from: socket)
                for index in 0..<count {
                    let bytes = UnsafeRawBufferPointer(rebasing: receive.slot(index)[0..<receive.length(index)])
                    for listener in listeners { send.append(bytes, to: listener, on: socket) }
                }
                send.flush(on: socket)
                cpu.store(MediaForwarder.threadCPUNanoseconds(), ordering: .relaxed)
            }
            stopped.signal()
        }
        thread.start()
    }

    func stop() {
        running.store(false, ordering: .relaxed)
        socket.send([0], to: socket.localAddress)
        stopped.wait()
    }
}
