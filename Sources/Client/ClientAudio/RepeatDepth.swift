import AudioCore

/// How many earlier frames a speaker's packets repeat (RFC 2198), as their packets show it: the jitter buffer
/// waits under loss long enough for the packet that repeats a lost frame last, one frame more per frame repeated
/// beyond the first (docs/audio-engine.md, "Receive path").
///
/// A packet can repeat only the frames sent just before it with no gap between, so the first packets of every
/// talk spurt repeat fewer frames than the sender's level (the first none, the second one), and so may packets
/// after a pause in sending. Taken at their word, they would lower the wait just when a talk spurt is anchored
/// to it, and the spurt would play too early for the deepest copy of a lost frame. So the depth goes up with any
/// packet that repeats more, and down only with a packet that repeats fewer frames after at least as many
/// packets received in a row, a frame apart: one that could have repeated them all and did not.
struct RepeatDepth: Sendable, Equatable {
    /// Earlier frames the speaker's packets repeat now.
    private(set) var frames = 0
    /// The newest packet so far, and how many packets came in a row, a frame apart, up to and including it.
    private var newestSequence: UInt16?
    private var newestTimestamp: UInt32 = 0
    private var unbroken = 0

    /// One packet of the speaker: its sequence number and RTP timestamp, and how many frames back the deepest
    /// frame it repeats goes (0 for a plain packet).
    mutating func observe(sequence: UInt16, timestamp: UInt32, repeats: Int) {
        var before = 0
        if let newestSequence {
            let ahead = Int16(bitPattern: sequence &- newestSequence)
            if ahead <= 0 {
                // Out of order or again: it says nothing about the packets just before it.
                frames = max(frames, repeats)
                return
            }
            before = ahead == 1 && timestamp &- newestTimestamp == AudioFormat.rtpTimestampStep ? unbroken : 0
        }
        (newestSequence, newestTimestamp) = (sequence, timestamp)
        unbroken = before + 1
        if repeats >= frames || before >= frames { frames = repeats }
    }
}
