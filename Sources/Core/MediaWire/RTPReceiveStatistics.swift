/// What the sequence check of RFC 3550 appendix A.1 made of one packet.
public enum RTPSequenceVerdict: Sendable, Equatable {
    /// In order (or a small jump forward): a valid packet.
    case valid
    /// The source is still on probation: fewer than `minSequential` packets in a row so far.
    case probation
    /// A packet from before the highest one seen: late, reordered or a duplicate. Still valid for a jitter
    /// buffer, which decides if it is too late.
    case lateOrDuplicate
    /// A jump too large to trust; one more packet following it restarts the sequence.
    case badJump
    /// The sequence restarted: the sender restarted, or the jump was confirmed by the next packet.
    case restarted
    /// The first packet of a new SSRC; the statistics were reset.
    case newSource
}

/// Per-source receive statistics and sequence validation following RFC 3550 appendix A.1 (sequence numbers,
/// cycles, probation, large jumps) and A.8 (interarrival jitter), with the figures a receiver report carries.
///
/// Pure: the caller passes each packet's arrival time in RTP clock units.
public struct RTPReceiveStatistics: Sendable, Equatable {
    public static let maxDropout: UInt16 = 3000
    public static let maxMisorder: UInt16 = 100
    static let sequenceModulo: UInt32 = 1 << 16

    public let minSequential: Int
    /// The source being tracked; 0 until the first packet.
    public private(set) var ssrc: UInt32 = 0
    public private(set) var started = false
    var maxSequence: UInt16 = 0
    var cycles: UInt32 = 0
    var baseSequence: UInt32 = 0
    var badSequence: UInt32 = sequenceModulo + 1
    var probation = 0
    public private(set) var received: UInt64 = 0
    var expectedPrior: UInt64 = 0
    var receivedPrior: UInt64 = 0
    var lastTransit: Int64?
    /// The interarrival jitter estimate, in RTP clock units, scaled by 16 as in appendix A.8.
    var jitterScaled: UInt64 = 0
    /// The timestamp of the highest valid packet, to spot gaps left by DTX.
    public private(set) var lastTimestamp: UInt32 = 0
    /// Times the sequence restarted or the source changed.
    public private(set) var restarts = 0
    /// Runs of consecutive sequence numbers skipped since ``takeLossRuns()``, and the packets in them.
    var runsSinceTaken = 0
    var lostInRunsSinceTaken = 0

    /// `minSequential` is how many packets in a row a new source needs before it counts (RFC 3550 uses 2;
    /// a receiver whose packets are already authenticated by SRTP may use 0).
    public init(minSequential: Int = 2) {
        self.minSequential = max(0, minSequential)
    }

    /// The extended highest sequence number received: cycles in the top 16 bits.
    public var extendedHighestSequence: UInt32 { cycles &+ UInt32(maxSequence) }

    /// Packets expected from the first to the highest sequence number.
    public var expected: UInt64 {
        guard started else { return 0 }
        return UInt64(extendedHighestSequence) &- UInt64(baseSequence) &+ 1
    }

    /// Packets lost: expected minus received; negative when duplicates arrived.
    public var cumulativeLost: Int64 { Int64(bitPattern: expected) - Int64(bitPattern: received) }

    /// The interarrival jitter in RTP clock units.
    public var jitter: UInt32 { UInt32(truncatingIfNeeded: jitterScaled >> 4) }

    private mutating func initSequence(_ sequence: UInt16) {
        baseSequence = UInt32(sequence)
        maxSequence = sequence
        badSequence = Self.sequenceModulo + 1
        cycles = 0
        received = 0
        receivedPrior = 0
        expectedPrior = 0
    }

    /// Accounts for one packet. `arrival` is when it arrived, in RTP clock units (48,000 per second for Opus).
    public mutating func record(
        ssrc packetSSRC: UInt32, sequence: UInt16, timestamp: UInt32, arrival: Int64
    ) -> RTPSequenceVerdict {
        if !started || packetSSRC != ssrc {
            let previousRestarts = restarts + (started ? 1 : 0)
            self = RTPReceiveStatistics(minSequential: minSequential)
            restarts = previousRestarts
            ssrc = packetSSRC
            started = true
            initSequence(sequence)
            maxSequence = sequence &- 1
            probation = minSequential
            if probation == 0 {
                initSequence(sequence)
                received = 1
                noteTiming(timestamp: timestamp, arrival: arrival)
                lastTimestamp = timestamp
                return .newSource
            }
            return update(sequence: sequence, timestamp: timestamp, arrival: arrival, isNew: true)
        }
        return update(sequence: sequence, timestamp: timestamp, arrival: arrival, isNew: false)
    }

    private mutating func update(
        sequence: UInt16, timestamp: UInt32, arrival: Int64, isNew: Bool
    )
        -> RTPSequenceVerdict
    {
        let delta = sequence &- maxSequence
        if probation > 0 {
            if sequence == maxSequence &+ 1 {
                probation -= 1
                maxSequence = sequence
                if probation == 0 {
                    initSequence(sequence)
                    received += 1
                    noteTiming(timestamp: timestamp, arrival: arrival)
                    lastTimestamp = timestamp
                    return isNew ? .newSource : .valid
                }
            } else {
                probation = minSequential - 1
                maxSequence = sequence
            }
            return isNew ? .newSource : .probation
        }
        var verdict = RTPSequenceVerdict.valid
        if delta < Self.maxDropout {
            if delta > 1 {
                // The numbers skipped are one run of loss (a packet of it arriving late is not taken back).
                runsSinceTaken += 1
                lostInRunsSinceTaken += Int(delta) - 1
            }
            if sequence < maxSequence { cycles &+= Self.sequenceModulo }
            maxSequence = sequence
            lastTimestamp = timestamp
        } else if UInt32(delta) <= Self.sequenceModulo - UInt32(Self.maxMisorder) {
            if UInt32(sequence) == badSequence {
                // Two packets in a row after the jump: the sender restarted without telling us.
                initSequence(sequence)
                restarts += 1
                lastTransit = nil
                lastTimestamp = timestamp
                verdict = .restarted
            } else {
                badSequence = (UInt32(sequence) + 1) & (Self.sequenceModulo - 1)
                return .badJump
            }
        } else {
            verdict = .lateOrDuplicate
        }
        received += 1
        noteTiming(timestamp: timestamp, arrival: arrival)
        return verdict
    }

    /// Appendix A.8: J += (|D| - J) / 16, with D the change in transit time. A timestamp jump over DTX silence
    /// moves the timestamp and the arrival time together, so it does not count as jitter.
    private mutating func noteTiming(timestamp: UInt32, arrival: Int64) {
        let transit = arrival &- Int64(timestamp)
        defer { lastTransit = transit }
        guard let last = lastTransit else { return }
        var difference = transit &- last
        // Timestamps wrap every 2^32 units (about a day at 48 kHz); fold the difference into range.
        difference = Int64(Int32(truncatingIfNeeded: difference))
        let magnitude = UInt64(difference.magnitude)
        // jitterScaled holds 16 J, so J += (|D| - J)/16 becomes 16J += |D| - 16J/16.
        jitterScaled = jitterScaled &+ magnitude &- ((jitterScaled &+ 8) >> 4)
    }

    /// The runs of loss since the last call (each a run of consecutive sequence numbers that never came before a
    /// later one did), and starts counting afresh; nil when nothing was lost.
    public mutating func takeLossRuns() -> RTCPLossRuns? {
        defer { (runsSinceTaken, lostInRunsSinceTaken) = (0, 0) }
        guard started, runsSinceTaken > 0 else { return nil }
        return RTCPLossRuns(
            ssrc: ssrc, runs: UInt16(clamping: runsSinceTaken), lost: UInt16(clamping: lostInRunsSinceTaken))
    }

    /// The loss figures for a receiver report block since the last call, and advances the interval.
    public mutating func reportBlock(
        lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0
    )
        -> RTCPReportBlock
    {
        let expectedNow = expected
        let expectedInterval = expectedNow &- expectedPrior
        expectedPrior = expectedNow
        let receivedInterval = received &- receivedPrior
        receivedPrior = received
        let lostInterval = Int64(bitPattern: expectedInterval) - Int64(bitPattern: receivedInterval)
        let fraction: UInt8 =
            expectedInterval == 0 || lostInterval <= 0
            ? 0 : UInt8(min(255, (lostInterval << 8) / Int64(bitPattern: expectedInterval)))
        return RTCPReportBlock(
            ssrc: ssrc, fractionLost: fraction, cumulativeLost: Int32(clamping: cumulativeLost),
            extendedHighestSequence: extendedHighestSequence, jitter: jitter, lastSenderReport: lastSenderReport,
            delaySinceLastSenderReport: delaySinceLastSenderReport)
    }
}
