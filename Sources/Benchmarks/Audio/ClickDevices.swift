import AudioCore
import AudioDevices
import Platform
import Synchronization

/// What the latency rigs play into a microphone: a quiet 300 Hz tone with a click every 500 ms. The tone's
/// level sways three times a second, as speech does, so that Opus's activity detection keeps sending it (a
/// steady tone would be taken for background noise and fall into DTX) and every silence in what the listener
/// hears is a real gap.
struct ClickSignal {
    /// How far apart the clicks are.
    static let clickInterval = AudioFormat.samples(milliseconds: 500)

    private var tone = ToneGenerator(frequency: 300, amplitude: 1)
    private var sway = ToneGenerator(frequency: 3, amplitude: 1)
    private(set) var injector = ClickInjector(interval: clickInterval)

    /// Fills `buffer` with the next samples; returns the offset in it of a click's onset, if one starts there.
    mutating func fill(_ buffer: UnsafeMutableBufferPointer<Int16>) -> Int? {
        let position = injector.position
        for index in buffer.indices {
            // Between 3 % and 9 % of full scale: well above the gap threshold, well below the click's.
            let level = 0.06 + 0.03 * Double(sway.next()) / 32_767
            buffer[index] = Int16((Double(tone.next()) * level).rounded())
        }
        injector.process(buffer)
        let offset = (injector.interval - position % injector.interval) % injector.interval
        return offset < buffer.count ? offset : nil
    }
}

/// Times of events recorded on an audio thread without allocating: a fixed array and an atomic count.
final class EventTimes: @unchecked Sendable {
    // `@unchecked`: one thread appends (slots past `count`, published with a releasing store); readers read
    // the first `count` slots after an acquiring load.
    private let storage: UnsafeMutablePointer<Int64>
    private let capacity = 16_384
    private let count = Atomic<Int>(0)

    init() {
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: 0, count: capacity)
    }

    deinit { storage.deallocate() }

    func append(_ time: Int64) {
        let index = count.load(ordering: .relaxed)
        guard index < capacity else { return }
        storage[index] = time
        count.store(index + 1, ordering: .releasing)
    }

    var values: [Int64] {
        Array(UnsafeBufferPointer(start: storage, count: count.load(ordering: .acquiring)))
    }

    var isEmpty: Bool { count.load(ordering: .acquiring) == 0 }
}

/// Paces a bench device like a sound card: each period waits for its deadline on a `PeriodClock` whose period
/// is the length of the buffer asked for, so a stream with longer periods is paced at its own periods.
struct DevicePacing {
    private var clock = PeriodClock()

    /// Waits for the deadline of a period of `samples` samples; returns when that period began, in µs.
    mutating func wait(samples: Int) -> Int64 {
        let period = AudioFormat.nanoseconds(samples: Int64(samples))
        if period != clock.periodNanoseconds { clock = PeriodClock(periodNanoseconds: period) }
        clock.wait()
        return (clock.lastDeadline - period) / 1_000
    }
}

/// A paced microphone hearing ``ClickSignal``; it notes when each click went in.
final class ClickMicrophone: AudioInput, @unchecked Sendable {
    // `@unchecked`: only the capture thread reads; `onsets` is safe to read from anywhere.
    let name = "click-injector"
    let onsets = EventTimes()
    private var pacing = DevicePacing()
    private var signal = ClickSignal()

    func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        // A device's read returns when the period is full: its first sample was heard one period earlier.
        let periodStart = pacing.wait(samples: buffer.count)
        if let offset = signal.fill(buffer) {
            onsets.append(periodStart + AudioFormat.microseconds(samples: Int64(offset)))
        }
        return 0
    }
}

/// A paced loudspeaker that finds clicks in what it plays and notes when each one came out, and the longest
/// silence once sound has started, until told to stop watching.
final class ClickLoudspeaker: AudioOutput, @unchecked Sendable {
    // `@unchecked`: only the playback thread writes; the results are atomics.
    let name = "click-detector"
    let onsets = EventTimes()
    private var pacing = DevicePacing()
    /// Whether it keeps time itself, or is driven by the microphone on its thread (a speaker's duplex stream).
    /// Set by the opener before the stream uses it.
    var driven = false
    private var detector = ClickDetector()
    private var quietRun = 0
    private let longestQuiet = Atomic<Int>(0)
    private let watching = Atomic<Bool>(false)

    /// Starts measuring silence (once sound flows).
    func watchGaps(_ watch: Bool) { watching.store(watch, ordering: .relaxed) }

    /// The longest run of silent samples while watching, in samples.
    var longestGap: Int { longestQuiet.load(ordering: .relaxed) }

    func write(_ buffer: UnsafeBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        // Paced, a period written is played from its deadline on; driven by the microphone's clock (one clock for
        // both, as a sound card's), it is played from the moment the microphone's period ended: now.
        let periodStart =
            driven
            ? MonotonicClock.microseconds()
            : pacing.wait(samples: buffer.count) + AudioFormat.microseconds(samples: Int64(buffer.count))
        let start = detector.position
        let onsets = onsets
        detector.process(buffer) { position in
            onsets.append(periodStart + AudioFormat.microseconds(samples: Int64(position - start)))
        }
        guard watching.load(ordering: .relaxed) else {
            quietRun = 0
            return 0
        }
        for sample in buffer {
            if abs(Int(sample)) < 200 {
                quietRun += 1
                if quietRun > longestQuiet.load(ordering: .relaxed) {
                    longestQuiet.store(quietRun, ordering: .relaxed)
                }
            } else {
                quietRun = 0
            }
        }
        return 0
    }
}

/// Pairs click onsets sent with those found: for each sent one, the delay to the first found at or after it
/// and less than 400 ms later, in ms; clicks never found are left out.
func clickDelays(sent: [Int64], found: [Int64]) -> [Double] {
    var delays: [Double] = []
    var next = 0
    for onset in sent {
        while next < found.count && found[next] < onset { next += 1 }
        guard next < found.count, found[next] - onset < 400_000 else { continue }
        delays.append(Double(found[next] - onset) / 1000)
        next += 1
    }
    return delays
}
