/// What to play for one 20 ms frame of one speaker, chosen by ``JitterBuffer/nextFrame(at:)``.
public enum PlayoutDecision<Payload: Sendable>: Sendable {
    /// Decode this packet.
    case packet(Payload)
    /// The frame's packet is missing but the next one is here: decode the missing frame from this packet's in-band
    /// FEC (Opus `decode_fec = 1`). The packet stays buffered and is played normally on the next tick.
    case fecFrom(Payload)
    /// The frame's packet is missing (lost or not here yet): run the decoder's packet-loss concealment.
    case conceal
    /// Nothing is being said: the stream has not started, or the sender is in DTX between talk spurts.
    case silence
}

extension PlayoutDecision: Equatable where Payload: Equatable {}

/// The tuning of a ``JitterBuffer``. The defaults suit 20 ms Opus frames; docs/audio.md explains each.
public struct JitterBufferConfiguration: Sendable, Equatable {
    /// The smallest target delay, in µs beyond the fastest packet seen: one frame.
    public var minimumDelay: Int64 = 20_000
    /// The largest target delay, and the delay above which frames are skipped without waiting, in µs.
    public var maximumDelay: Int64 = 200_000
    /// Packet slots. Packets more than this many sequence numbers ahead of playout push the oldest out.
    public var capacity: Int = 64
    /// The share of recent packets whose relative delay the target covers.
    public var quantile: Double = 0.95
    /// How much each older delay sample still counts when a new packet arrives (exponential forgetting).
    public var forgetFactor: Double = 0.99
    /// The width of one delay histogram bucket, in µs.
    public var bucketWidth: Int64 = 2_000
    /// How many frames to conceal while waiting for a late packet before the stream counts as paused.
    public var holdFrames: Int = 3
    /// How far playout may lag behind the target before a speech frame is dropped to catch up, in µs.
    public var skipThreshold: Int64 = 20_000
    /// How many ticks in a row playout must lag by `skipThreshold` before a speech frame is dropped (below the
    /// maximum delay, where frames are dropped at once).
    public var skipInterval: Int = 25
    /// Packets per block of the sliding minimum that anchors relative delays.
    public var baselineBlockSize: Int = 50
    /// Blocks in the sliding minimum (the window is about `baselineBlockSize * baselineBlocks` packets).
    public var baselineBlocks: Int = 4
    /// A relative delay this far (µs) from the baseline means the sender's clock jumped: start timing afresh.
    public var resyncThreshold: Int64 = 2_000_000
    /// The lowest target while packets are being lost, in µs; 0 turns it off. One frame (plus the floor) lets the
    /// next packet arrive in time for its in-band FEC to rebuild a lost one, instead of concealing and waiting.
    public var lossDelay: Int64 = 0
    /// How many ticks after the last loss `lossDelay` still applies.
    public var lossMemory: Int = 500
    /// A talk spurt after a pause keeps the previous spurt's timing (the pause lasts exactly as long as the
    /// sender's) unless the target schedule differs from it by more than this, in µs; 0 always re-anchors on
    /// the target. Small moves of the target would otherwise shift a spurt by a whole tick now and then.
    public var spurtHysteresis: Int64 = 10_000

    /// The default tuning.
    public init() {}
}

/// Counters and current delays of one ``JitterBuffer``. Times are in microseconds.
public struct JitterBufferStatistics: Sendable, Equatable {
    /// Packets accepted into the buffer, including late ones.
    public var received = 0
    /// Packets that arrived again after they were buffered or played.
    public var duplicate = 0
    /// Packets that arrived after their frame had been played, concealed or recovered.
    public var late = 0
    /// Sequence numbers that playout passed without their packet (late arrivals are counted here too).
    public var lost = 0
    /// Lost frames rebuilt from the next packet's FEC.
    public var recoveredByFEC = 0
    /// Frames whose own packet never came, filed from a later packet's RFC 2198 redundancy.
    public var recoveredByRED = 0
    /// Frames handed to packet-loss concealment.
    public var concealed = 0
    /// Packets dropped during speech to bring the delay back down.
    public var skipped = 0
    /// Packets dropped because they no longer fitted in the buffer.
    public var overflow = 0
    /// Packets rejected as out of sequence range (RFC 3550 A.1 probation).
    public var rejected = 0
    /// Times the stream was restarted: a new SSRC or a sequence jump confirmed by the next packet.
    public var streamResets = 0
    /// Times the timing was restarted because the RTP timestamps jumped away from the arrival times.
    public var timingResyncs = 0
    /// RFC 3550 interarrival jitter estimate.
    public var jitter: Int64 = 0
    /// The delay the buffer currently aims for.
    public var targetDelay: Int64 = 0
    /// How long after its earliest possible arrival the last frame was played.
    public var playoutDelay: Int64 = 0

    /// Empty counters.
    public init() {}
}

/// An adaptive jitter buffer for one speaker's 20 ms RTP packets. Pure: no clock, no threads, no allocation after
/// `init`; times come in as microseconds on any monotonic clock.
///
/// Feed it every packet with ``insert(sequence:timestamp:ssrc:arrival:payload:)`` and ask it what to play with
/// ``nextFrame(at:)`` once per 20 ms tick. It learns each packet's delay relative to the fastest recent one, aims
/// the playout at a quantile of those delays, waits briefly for late packets, asks for FEC or concealment when a
/// packet is missing, re-anchors at the start of each talk spurt, and drops a frame now and then when it is far
/// behind its target. See docs/audio.md for the algorithm.
///
/// `Payload` is opaque (encoded bytes, or an index into a pool the caller owns). A dropped payload is released on
/// the thread that calls in; use an index into a preallocated pool when that thread must not free memory.
public struct JitterBuffer<Payload: Sendable>: Sendable {
    private enum Phase: Sendable {
        /// Waiting for the next talk spurt; its first packet plays when the target schedule says it is due.
        case idle
        /// Playing one frame per tick from `playoutTimestamp` on.
        case playing
    }

    private static var emptySlot: Int64 { Int64.min }
    private static var frameSamples: Int64 { Int64(AudioFormat.samplesPerFrame) }

    /// The tuning in use.
    public private(set) var configuration: JitterBufferConfiguration
    /// Counters and current delays.
    public private(set) var statistics = JitterBufferStatistics()

    private var slotSequence: [Int64]
    private var slotTimestamp: [Int64]
    private var slotPayload: [Payload?]
    private var playedSequence: [Int64]
    private var bufferedCount = 0

    private var ssrc: UInt32?
    private var highestSequence: Int64?
    private var highestTimestamp: Int64?
    private var probationSequence: UInt16?
    private var phase = Phase.idle
    private var nextSequence: Int64?
    private var playoutTimestamp: Int64 = 0
    private var holdCount = 0
    private var tick = 0
    private var behindSince: Int?

    private var histogram: [Double]
    private var histogramTotal = 0.0
    private var blockMinimums: [Int64]
    private var blockMinimumCount = 0
    private var blockMinimumNext = 0
    private var currentBlockMinimum = Int64.max
    private var currentBlockCount = 0
    private var baseline: Int64?
    private var lastTransit: Int64?
    private var jitterEstimate = 0.0
    private var lossTicksLeft = 0
    /// When the last frame played was played (the caller's time) and its RTP timestamp, for the next spurt.
    private var lastPlayed: (time: Int64, timestamp: Int64)?

    /// A buffer with `configuration` (values out of range are clamped to sane ones).
    public init(configuration: JitterBufferConfiguration = JitterBufferConfiguration()) {
        var configuration = configuration
        configuration.capacity = max(4, configuration.capacity)
        configuration.minimumDelay = max(0, configuration.minimumDelay)
        configuration.maximumDelay = max(configuration.minimumDelay, configuration.maximumDelay)
        configuration.bucketWidth = max(100, configuration.bucketWidth)
        configuration.quantile = min(1, max(0, configuration.quantile))
        configuration.forgetFactor = min(0.9999, max(0, configuration.forgetFactor))
        configuration.baselineBlockSize = max(1, configuration.baselineBlockSize)
        configuration.baselineBlocks = max(1, configuration.baselineBlocks)
        configuration.holdFrames = max(0, configuration.holdFrames)
        self.configuration = configuration
        let capacity = configuration.capacity
        slotSequence = Array(repeating: Self.emptySlot, count: capacity)
        slotTimestamp = Array(repeating: 0, count: capacity)
        slotPayload = Array(repeating: nil, count: capacity)
        playedSequence = Array(repeating: Self.emptySlot, count: capacity)
        let buckets = Int(configuration.maximumDelay / configuration.bucketWidth) + 2
        histogram = Array(repeating: 0, count: buckets)
        blockMinimums = Array(repeating: 0, count: configuration.baselineBlocks)
        statistics.targetDelay = configuration.minimumDelay
    }

    /// Packets waiting in the buffer.
    public var bufferedPackets: Int { bufferedCount }

    /// Forgets the stream (packets, sequence and timing) but keeps the counters; the next packet starts afresh.
    public mutating func reset() {
        for index in slotSequence.indices {
            slotSequence[index] = Self.emptySlot
            slotPayload[index] = nil
            playedSequence[index] = Self.emptySlot
        }
        bufferedCount = 0
        ssrc = nil
        highestSequence = nil
        highestTimestamp = nil
        probationSequence = nil
        phase = .idle
        nextSequence = nil
        holdCount = 0
        behindSince = nil
        resetTiming()
        for index in histogram.indices { histogram[index] = 0 }
        histogramTotal = 0
        lastTransit = nil
        jitterEstimate = 0
        lossTicksLeft = 0
        statistics.jitter = 0
        statistics.targetDelay = configuration.minimumDelay
    }

    // MARK: - Arrival

    /// Files one received RTP packet: its `sequence` number (wraps at 65535), `timestamp` at 48 kHz (wraps at
    /// 2^32; jumps across DTX silence), `ssrc` (a new one restarts the stream), `arrival` in µs on the clock of
    /// ``nextFrame(at:)``, and `payload`, the encoded frame, kept opaque.
    @_specialize(exported:true,where Payload == [UInt8])
    public mutating func insert(sequence: UInt16, timestamp: UInt32, ssrc: UInt32, arrival: Int64, payload: Payload) {
        // Both entry points are specialised for the payload the media layer uses: called from another module, the
        // generic code would look up type metadata at run time for every packet and every frame.
        let arrival = Self.clampTime(arrival)
        if let current = self.ssrc, current != ssrc {
            reset()
            statistics.streamResets += 1
        }
        self.ssrc = ssrc
        guard let extended = extendSequence(sequence) else {
            statistics.rejected += 1
            return
        }
        let extendedTimestamp = extendTimestamp(timestamp)
        let index = slotIndex(extended)

        if let next = nextSequence, extended < next {
            if playedSequence[index] == extended {
                statistics.duplicate += 1
            } else {
                statistics.received += 1
                statistics.late += 1
                observeTiming(arrival: arrival, timestamp: extendedTimestamp)
            }
            return
        }
        if slotSequence[index] == extended {
            statistics.duplicate += 1
            return
        }
        statistics.received += 1
        observeTiming(arrival: arrival, timestamp: extendedTimestamp)

        if let next = nextSequence, extended >= next + Int64(configuration.capacity) {
            makeRoom(upTo: extended - Int64(configuration.capacity))
        }
        if slotSequence[index] != Self.emptySlot {
            if slotSequence[index] > extended {
                statistics.late += 1
                return
            }
            removeSlot(index)
            statistics.overflow += 1
        }
        slotSequence[index] = extended
        slotTimestamp[index] = extendedTimestamp
        slotPayload[index] = payload
        bufferedCount += 1
    }

    /// Files a frame repeated in a later packet (RFC 2198) at its own packet's place, if that one is missing and
    /// not yet due: it then plays before FEC or concealment are tried. It teaches the timing nothing, counts as
    /// `recoveredByRED` (not received) and as a loss for `lossDelay`, which RED needs as FEC does.
    @_specialize(exported:true,where Payload == [UInt8])
    public mutating func insertRedundant(sequence: UInt16, timestamp: UInt32, ssrc: UInt32, payload: Payload) {
        guard self.ssrc == ssrc, let highest = highestSequence, let top = highestTimestamp else { return }
        let extended = highest + Int64(Int16(bitPattern: sequence &- UInt16(truncatingIfNeeded: highest)))
        let index = slotIndex(extended)
        guard extended < highest, extended > highest - Int64(configuration.capacity),
            extended >= nextSequence ?? extended, slotSequence[index] == Self.emptySlot
        else { return }
        (slotSequence[index], slotPayload[index]) = (extended, payload)
        slotTimestamp[index] = top + Int64(Int32(bitPattern: timestamp &- UInt32(truncatingIfNeeded: top)))
        bufferedCount += 1
        statistics.recoveredByRED += 1
        noteLoss()
    }

    /// Sets `lossDelay`: a speaker whose packets repeat two frames needs one frame more than one who repeats one.
    public mutating func setLossDelay(_ delay: Int64) { configuration.lossDelay = max(0, delay) }

    /// Drops buffered packets up to and including `sequence` because newer ones need their slots.
    private mutating func makeRoom(upTo sequence: Int64) {
        for index in slotSequence.indices where slotSequence[index] != Self.emptySlot && slotSequence[index] <= sequence
        {
            removeSlot(index)
            statistics.overflow += 1
        }
        if let next = nextSequence, next <= sequence {
            statistics.lost += Int(sequence + 1 - next)
            nextSequence = sequence + 1
        }
        phase = .idle
    }

    /// Maps a 16-bit sequence number onto a 64-bit one that never wraps (RFC 3550 A.1), or nil while a large jump
    /// waits for the next packet to confirm it.
    private mutating func extendSequence(_ sequence: UInt16) -> Int64? {
        guard let highest = highestSequence else {
            highestSequence = Int64(sequence)
            return Int64(sequence)
        }
        let delta = Int64(Int16(bitPattern: sequence &- UInt16(truncatingIfNeeded: highest)))
        if delta > -100 && delta < 3000 {
            probationSequence = nil
            let extended = highest + delta
            highestSequence = max(highest, extended)
            return extended
        }
        if probationSequence == sequence {
            let currentSSRC = ssrc
            reset()
            ssrc = currentSSRC
            statistics.streamResets += 1
            highestSequence = Int64(sequence)
            return Int64(sequence)
        }
        probationSequence = sequence &+ 1
        return nil
    }

    /// Maps a 32-bit RTP timestamp onto a 64-bit one that never wraps.
    private mutating func extendTimestamp(_ timestamp: UInt32) -> Int64 {
        guard let highest = highestTimestamp else {
            highestTimestamp = Int64(timestamp)
            return Int64(timestamp)
        }
        let delta = Int64(Int32(bitPattern: timestamp &- UInt32(truncatingIfNeeded: highest)))
        let extended = highest + delta
        highestTimestamp = max(highest, extended)
        return extended
    }

    // MARK: - Timing

    /// Learns from one packet's relative delay: the sliding baseline, the delay histogram and RFC 3550 jitter.
    private mutating func observeTiming(arrival: Int64, timestamp: Int64) {
        let relative = arrival - AudioFormat.microseconds(samples: timestamp)
        if let base = baseline, abs(relative - base) > configuration.resyncThreshold {
            resetTiming()
            lastTransit = nil
            statistics.timingResyncs += 1
            phase = .idle
        }
        if let previous = lastTransit {
            let difference = Double(abs(relative - previous))
            jitterEstimate += (difference - jitterEstimate) / 16
            statistics.jitter = Int64(jitterEstimate.rounded())
        }
        lastTransit = relative

        currentBlockMinimum = min(currentBlockMinimum, relative)
        currentBlockCount += 1
        if currentBlockCount >= configuration.baselineBlockSize {
            blockMinimums[blockMinimumNext] = currentBlockMinimum
            blockMinimumNext = (blockMinimumNext + 1) % blockMinimums.count
            blockMinimumCount = min(blockMinimumCount + 1, blockMinimums.count)
            currentBlockCount = 0
            currentBlockMinimum = relative
        }
        var base = currentBlockMinimum
        for index in 0..<blockMinimumCount {
            base = min(base, blockMinimums[index])
        }
        baseline = base

        let bucket = min(Int((relative - base) / configuration.bucketWidth), histogram.count - 1)
        let forget = configuration.forgetFactor
        for index in histogram.indices {
            histogram[index] *= forget
        }
        histogram[bucket] += 1 - forget
        histogramTotal = histogramTotal * forget + (1 - forget)
        statistics.targetDelay = computeTarget()
    }

    private mutating func resetTiming() {
        baseline = nil
        lastPlayed = nil
        blockMinimumCount = 0
        blockMinimumNext = 0
        currentBlockMinimum = Int64.max
        currentBlockCount = 0
    }

    /// The quantile of recent relative delays, clamped to the configured bounds.
    private func computeTarget() -> Int64 {
        guard histogramTotal > 0 else {
            let floor = lossTicksLeft > 0 ? configuration.lossDelay : 0
            return min(configuration.maximumDelay, max(configuration.minimumDelay, floor))
        }
        let wanted = configuration.quantile * histogramTotal
        var cumulative = 0.0
        var bucket = histogram.count - 1
        for index in histogram.indices {
            cumulative += histogram[index]
            if cumulative >= wanted * (1 - 1e-9) {
                bucket = index
                break
            }
        }
        let delay = Int64(bucket + 1) * configuration.bucketWidth
        let floor =
            lossTicksLeft > 0 ? max(configuration.minimumDelay, configuration.lossDelay) : configuration.minimumDelay
        return min(configuration.maximumDelay, max(floor, delay))
    }

    /// A packet was lost: keep the target at `lossDelay` or more for the next `lossMemory` ticks.
    private mutating func noteLoss() {
        guard configuration.lossDelay > 0 else { return }
        lossTicksLeft = configuration.lossMemory
        statistics.targetDelay = computeTarget()
    }

    /// When the frame with `timestamp` should play by the current target, on the caller's clock.
    private func due(_ timestamp: Int64, base: Int64) -> Int64 {
        base + AudioFormat.microseconds(samples: timestamp) + statistics.targetDelay
    }

    /// When a talk spurt starting at `timestamp` should play: on the previous spurt's timing, from the tick half
    /// a frame before it on (ticks are a frame apart, so exactly one tick qualifies), while the target schedule
    /// is within `spurtHysteresis` of that; otherwise on the target schedule.
    private func spurtDue(_ timestamp: Int64, base: Int64) -> Int64 {
        let scheduled = due(timestamp, base: base)
        guard let lastPlayed, configuration.spurtHysteresis > 0, timestamp > lastPlayed.timestamp else {
            return scheduled
        }
        let continued = lastPlayed.time + AudioFormat.microseconds(samples: timestamp - lastPlayed.timestamp)
        guard abs(scheduled - continued) <= configuration.spurtHysteresis else { return scheduled }
        return continued - AudioFormat.microseconds(samples: Self.frameSamples) / 2
    }

    // MARK: - Playout

    /// Decides what to play for the next 20 ms frame. Call once per tick, with the tick's time in µs.
    @_specialize(exported:true,where Payload == [UInt8])
    public mutating func nextFrame(at now: Int64) -> PlayoutDecision<Payload> {
        let now = Self.clampTime(now)
        tick &+= 1
        if lossTicksLeft > 0 {
            lossTicksLeft -= 1
            if lossTicksLeft == 0 { statistics.targetDelay = computeTarget() }
        }
        switch phase {
        case .idle: return idleFrame(at: now)
        case .playing: return playingFrame(at: now)
        }
    }

    private mutating func idleFrame(at now: Int64) -> PlayoutDecision<Payload> {
        guard var head = lowestBuffered(), let base = baseline else { return .silence }
        // Packets held up far beyond the maximum delay give way to newer ones, so the delay stays bounded.
        while bufferedCount > 1,
            now - base - AudioFormat.microseconds(samples: slotTimestamp[head]) > configuration.maximumDelay
        {
            playedSequence[head] = slotSequence[head]
            removeSlot(head)
            statistics.skipped += 1
            guard let newer = lowestBuffered() else { break }
            head = newer
        }
        let sequence = slotSequence[head]
        // When only the talk spurt's first packet is missing, its frame is rebuilt from the second packet's FEC,
        // on the schedule the lost packet would have had.
        let recoverFirst = nextSequence.map { sequence == $0 + 1 } ?? false
        let startTimestamp = recoverFirst ? slotTimestamp[head] - Self.frameSamples : slotTimestamp[head]
        guard now >= spurtDue(startTimestamp, base: base) else { return .silence }
        phase = .playing
        holdCount = 0
        if let next = nextSequence, sequence > next {
            statistics.lost += Int(sequence - next)
            if recoverFirst, let payload = slotPayload[head] {
                statistics.recoveredByFEC += 1
                statistics.playoutDelay = now - base - AudioFormat.microseconds(samples: startTimestamp)
                nextSequence = sequence
                playoutTimestamp = slotTimestamp[head]
                return .fecFrom(payload)
            }
        }
        return play(head, at: now, base: base)
    }

    private mutating func playingFrame(at now: Int64) -> PlayoutDecision<Payload> {
        guard let next = nextSequence, let base = baseline else {
            phase = .idle
            return idleFrame(at: now)
        }
        let lag = now - due(playoutTimestamp, base: base)
        let index = slotIndex(next)
        if slotSequence[index] == next {
            if slotTimestamp[index] > playoutTimestamp {
                // The sequence is unbroken but the timestamp jumped: the sender was silent (DTX). Start the
                // next talk spurt on schedule, which also shrinks or grows the delay inside the silence.
                phase = .idle
                return idleFrame(at: now)
            }
            if lag < configuration.skipThreshold {
                behindSince = nil
            } else if behindSince == nil {
                behindSince = tick
            }
            let farBehind = lag + statistics.targetDelay > configuration.maximumDelay
            let behind = behindSince.map { tick &- $0 >= configuration.skipInterval } ?? false
            let following = slotIndex(next + 1)
            if farBehind || behind, slotSequence[following] == next + 1,
                slotTimestamp[following] == slotTimestamp[index] + Self.frameSamples
            {
                playedSequence[index] = next
                removeSlot(index)
                statistics.skipped += 1
                behindSince = nil
                return play(following, at: now, base: base)
            }
            return play(index, at: now, base: base)
        }
        if let head = lowestBuffered() {
            if lag < 0 && holdCount < configuration.holdFrames {
                // The target grew past the current schedule: wait for the missing packet instead of losing it.
                holdCount += 1
                statistics.concealed += 1
                return .conceal
            }
            statistics.lost += 1
            noteLoss()
            statistics.playoutDelay = now - base - AudioFormat.microseconds(samples: playoutTimestamp)
            nextSequence = next + 1
            playoutTimestamp += Self.frameSamples
            if holdCount > 0 && now >= due(playoutTimestamp, base: base) {
                // Frames were concealed while waiting for this packet and the next frame is due: the first stood
                // for the lost one. Go on to the next frame in this tick with one wait fewer, so each frame
                // concealed while waiting stands for one lost frame and a burst, however long, adds no delay.
                holdCount -= 1
                return playingFrame(at: now)
            }
            holdCount = 0
            if slotSequence[head] == next + 1 && slotTimestamp[head] == playoutTimestamp,
                let payload = slotPayload[head]
            {
                statistics.recoveredByFEC += 1
                return .fecFrom(payload)
            }
            statistics.concealed += 1
            return .conceal
        }
        holdCount += 1
        if holdCount > configuration.holdFrames {
            phase = .idle
            return .silence
        }
        statistics.concealed += 1
        return .conceal
    }

    /// Plays the packet in slot `index` and moves the schedule past it.
    private mutating func play(_ index: Int, at now: Int64, base: Int64) -> PlayoutDecision<Payload> {
        let sequence = slotSequence[index]
        let timestamp = slotTimestamp[index]
        let payload = slotPayload[index].take()
        playedSequence[index] = sequence
        slotSequence[index] = Self.emptySlot
        bufferedCount -= 1
        nextSequence = sequence + 1
        playoutTimestamp = timestamp + Self.frameSamples
        holdCount = 0
        lastPlayed = (now, timestamp)
        statistics.playoutDelay = now - base - AudioFormat.microseconds(samples: timestamp)
        guard let payload else { return .conceal }
        return .packet(payload)
    }

    /// Keeps caller times within ±2^60 µs (36,000 years) so no arithmetic on them can overflow.
    private static func clampTime(_ time: Int64) -> Int64 {
        min(max(time, -(1 << 60)), 1 << 60)
    }

    // MARK: - Slots

    private func slotIndex(_ sequence: Int64) -> Int {
        let capacity = Int64(configuration.capacity)
        return Int(((sequence % capacity) + capacity) % capacity)
    }

    private mutating func removeSlot(_ index: Int) {
        slotSequence[index] = Self.emptySlot
        slotPayload[index] = nil
        bufferedCount -= 1
    }

    /// The slot of the buffered packet with the lowest sequence number, if any.
    private func lowestBuffered() -> Int? {
        guard bufferedCount > 0 else { return nil }
        var best: Int?
        for index in slotSequence.indices where slotSequence[index] != Self.emptySlot {
            if best.map({ slotSequence[index] < slotSequence[$0] }) ?? true {
                best = index
            }
        }
        return best
    }
}
