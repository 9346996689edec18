import Foundation
import MediaTransport
import MediaWire
import Platform
import Synchronization

/// What the relay does to the RTP packets it carries towards the client: the loss and delay of `link`, decided
/// per packet from its RTP sequence number (counted from the first packet of its SSRC), so that a seed loses the
/// same packets on every run and the lost frames can be handed to a comparison that runs without a network.
/// Pure: the relay's thread asks it about each datagram.
public struct RelayImpairment: Sendable {
    /// What happens to one datagram.
    public enum Decision: Sendable, Equatable {
        /// Deliver it this many microseconds after it arrived.
        case deliver(afterMicroseconds: Int64)
        /// Drop it.
        case drop
    }

    /// One RTP packet the relay saw, and what it did with it.
    public struct Record: Sendable, Equatable {
        public var ssrc: UInt32
        public var sequence: UInt16
        public var timestamp: UInt32
        /// The packet's place in its stream: sequence numbers counted from the stream's first packet.
        public var index: Int
        public var decision: Decision
        /// The datagram's size (RTP header and extension, payload, SRTP tag).
        public var length: Int = 0
    }

    /// The loss and jitter applied; `baseDelayMilliseconds` is added to every packet.
    public var link: LinkImpairment
    /// Every RTP packet seen, in the order they came (none when made with `keepsRecords` false).
    public private(set) var records: [Record] = []
    /// RTP packets seen and dropped, counted whether or not records are kept.
    public private(set) var packetsSeen = 0
    public private(set) var packetsDropped = 0
    /// Whether every packet's record is kept: a long run counts only, so the relay's memory stays flat.
    public let keepsRecords: Bool
    private var newestSequence: [UInt32: (sequence: UInt16, index: Int)] = [:]

    public init(link: LinkImpairment, keepsRecords: Bool = true) {
        self.link = link
        self.keepsRecords = keepsRecords
    }

    /// Decides about one datagram from the server. RTCP and anything that is not RTP passes at once, unharmed:
    /// the impairment stands for a lossy path for audio, and the reports are what tell the speaker about it.
    public mutating func decide(_ datagram: UnsafeRawBufferPointer) -> Decision {
        guard datagram.count >= 12, datagram[0] >> 6 == 2, !RTCPPacket.isRTCP(datagram) else {
            return .deliver(afterMicroseconds: 0)
        }
        let sequence = UInt16(datagram[2]) << 8 | UInt16(datagram[3])
        let timestamp = datagram[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let ssrc = datagram[8..<12].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        // Counted from the stream's first packet; sequence numbers wrap at 65536, and a packet a little older
        // than the newest one counts back from it.
        var index = 0
        if let newest = newestSequence[ssrc] {
            index = newest.index + Int(Int16(bitPattern: sequence &- newest.sequence))
        }
        if index >= newestSequence[ssrc]?.index ?? 0 { newestSequence[ssrc] = (sequence, index) }
        let decision: Decision =
            link.isLost(frame: index) ? .drop : .deliver(afterMicroseconds: link.delay(frame: index))
        packetsSeen += 1
        if decision == .drop { packetsDropped += 1 }
        if keepsRecords {
            records.append(
                Record(
                    ssrc: ssrc, sequence: sequence, timestamp: timestamp, index: index, decision: decision,
                    length: datagram.count))
        }
        return decision
    }
}

/// A UDP relay in this process between one client's media and the server, standing for an impaired network:
/// the client is told to send to ``address``; the relay passes the client's datagrams to the server as they
/// come, and the server's datagrams to the client through ``RelayImpairment`` (loss and per-packet delay, so
/// packets may overtake each other). The server sees the relay's address as the client's. Nothing in the
/// client or the server knows it is there.
public final class ImpairingRelay: Sendable {
    /// Where the client should send its media.
    public var address: UDPAddress { clientSide.localAddress }

    private let clientSide: UDPSocket
    private let serverSide: UDPSocket
    private let server: UDPAddress
    private let impairment: Mutex<RelayImpairment>
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// A relay towards the server's media address `server` (on loopback), impairing what the server sends;
    /// `keepsRecords` false counts the packets without keeping a record of each.
    public init(server: UDPAddress, link: LinkImpairment, keepsRecords: Bool = true) throws(UDPError) {
        clientSide = try UDPSocket(binding: .loopback(port: 0), bufferBytes: 1 << 20)
        serverSide = try UDPSocket(binding: .loopback(port: 0), bufferBytes: 1 << 20)
        self.server = server
        impairment = Mutex(RelayImpairment(link: link, keepsRecords: keepsRecords))
    }

    /// Starts the relay's thread.
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        startThread(named: "clubroom-relay") { [self] in
            run()
            finished.signal()
        }
    }

    /// Stops the thread; packets still held back are dropped.
    public func stop() {
        if running.exchange(false, ordering: .acquiringAndReleasing) { finished.wait() }
    }

    /// Impairs the packets from now on with `link` instead (a network that starts or stops losing).
    public func change(to link: LinkImpairment) { impairment.withLock { $0.link = link } }

    /// Every RTP packet the server sent through the relay so far, with what was done to it.
    public var records: [RelayImpairment.Record] { impairment.withLock { $0.records } }

    /// RTP packets the server sent through the relay so far, and how many of them it dropped.
    public var counts: (seen: Int, dropped: Int) { impairment.withLock { ($0.packetsSeen, $0.packetsDropped) } }

    private func run() {
        var client: UDPAddress?
        var held: [(due: Int64, bytes: [UInt8])] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
        defer { buffer.deallocate() }
        var polls = [
            pollfd(fd: clientSide.fileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: serverSide.fileDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        while running.load(ordering: .acquiring) {
            var now = MonotonicClock.microseconds()
            let wait = held.first.map { max(0, $0.due - now) } ?? 20_000
            if wait < 1_000 {
                // poll counts whole milliseconds; the last part of a wait is slept exactly.
                if wait > 0 { MonotonicClock.sleep(microseconds: wait) }
                _ = poll(&polls, 2, 0)
            } else {
                _ = poll(&polls, 2, Int32(min(wait, 20_000) / 1_000))
            }
            while let got = clientSide.receive(into: buffer) {
                client = got.from
                serverSide.send(UnsafeRawBufferPointer(rebasing: buffer[0..<got.length]), to: server)
            }
            now = MonotonicClock.microseconds()
            while let got = serverSide.receive(into: buffer) {
                guard got.from == server else { continue }
                let datagram = UnsafeRawBufferPointer(rebasing: buffer[0..<got.length])
                switch impairment.withLock({ $0.decide(datagram) }) {
                case .drop: continue
                case .deliver(let delay):
                    let due = now + delay
                    let at = held.firstIndex { $0.due > due } ?? held.count
                    held.insert((due, Array(datagram)), at: at)
                }
            }
            now = MonotonicClock.microseconds()
            while let first = held.first, first.due <= now {
                held.removeFirst()
                if let client { clientSide.send(first.bytes, to: client) }
            }
        }
    }
}
