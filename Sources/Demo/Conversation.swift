/// Who says what next on the demo's stage: one voice at a time, the conversation's lines in order, lines that
/// cannot wait (a greeting, a new speaker's first words) before them, and nobody who is off stage or muted.
///
/// A pure value: the director tells it what happened and plays what it hands out; the pauses between lines and
/// the clock are the director's.
public struct Conversation: Sendable, Equatable {
    /// The conversation's lines, said in this order, round and round.
    public private(set) var script: [DemoClip]
    /// Where the next script line is looked for.
    public private(set) var position = 0
    /// Lines to say before the script continues, in order.
    public private(set) var pending: [DemoClip] = []
    /// Who may speak now: on stage and not muted by someone else.
    public private(set) var voices: Set<String> = []
    /// The line being said, if any.
    public private(set) var current: DemoClip?

    public init(script: [DemoClip]) {
        self.script = script
    }

    /// `speaker` may speak from now on.
    public mutating func allow(_ speaker: String) {
        voices.insert(speaker)
    }

    /// `speaker` may no longer speak, and their pending lines are dropped. Returns true when they were speaking,
    /// so the caller stops their voice.
    @discardableResult
    public mutating func silence(_ speaker: String) -> Bool {
        voices.remove(speaker)
        pending.removeAll { $0.speaker == speaker }
        guard current?.speaker == speaker else { return false }
        current = nil
        return true
    }

    /// Says `clip` as soon as the current line ends, after lines queued before it.
    public mutating func enqueue(_ clip: DemoClip) {
        pending.append(clip)
    }

    /// The line that starts now, or nil while someone is speaking or nobody can. The line becomes `current`.
    public mutating func next() -> DemoClip? {
        guard current == nil else { return nil }
        pending.removeAll { !voices.contains($0.speaker) }
        if !pending.isEmpty {
            current = pending.removeFirst()
            return current
        }
        for step in 0..<script.count {
            let index = (position + step) % script.count
            if voices.contains(script[index].speaker) {
                position = (index + 1) % script.count
                current = script[index]
                return current
            }
        }
        return nil
    }

    /// `clip` has been said; returns false when it was no longer the current line (it was cut off earlier).
    @discardableResult
    public mutating func finished(_ clip: DemoClip) -> Bool {
        guard current == clip else { return false }
        current = nil
        return true
    }
}
