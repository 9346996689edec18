import AudioCore
import AudioDevices
import BenchmarkSupport
import ClientAudio
import Foundation
import Platform
import RoomApp
import RoomCore
import ServerBenchmarks
import Synchronization

/// `clubroom bench highlight`: who the room screen highlights as talking, against who talks. Two speakers send
/// talk spurts through a real room server (loopback, media on) that overlap in time; a listener's sound follows
/// who talks from every packet's level (`ClientAudio`'s talkers) and its reports go through the room screen's
/// reducer, as in `clubroom join`. Measured: from the moment a spurt starts (its speaker's microphone opens) to
/// the moment the reducer highlights that speaker, and how often the set of highlighted people changes, against
/// how often it changes in the spurts' own schedule (the floor: a highlight that follows the talk exactly).
public enum HighlightBenchmark {
    /// What one run measured.
    public struct Result: Sendable, Equatable {
        /// Onset → highlight, in milliseconds, one per spurt that was highlighted.
        public var latencies: [Double]
        /// Spurts started.
        public var spurts: Int
        /// Changes of the highlighted set per minute.
        public var changesPerMinute: Double
        /// Changes of the talking set per minute in the schedule itself.
        public var scheduledChangesPerMinute: Double

        public func percentile(_ fraction: Double) -> Double { BenchmarkSupport.percentile(latencies, fraction) }
    }

    /// One speaker's spurts: on for `talk` ms, off for `pause` ms, starting after `offset` ms.
    struct Pattern {
        var identity: String
        var hertz: Int
        var offset: Int64
        var talk: Int64
        var pause: Int64

        /// Whether the speaker talks `elapsed` ms after the start.
        func talks(at elapsed: Int64) -> Bool {
            guard elapsed >= offset else { return false }
            return (elapsed - offset) % (talk + pause) < talk
        }
    }

    /// The two speakers: their spurts overlap, and their pauses are longer than any hold, so the highlight has
    /// to follow every edge.
    static let patterns = [
        Pattern(identity: "ana", hertz: 400, offset: 300, talk: 1_500, pause: 900),
        Pattern(identity: "bo", hertz: 600, offset: 1_100, talk: 1_100, pause: 1_300),
    ]

    /// Runs for `seconds` and returns what it measured.
    public static func run(seconds: Int, roles: RoleTable) throws -> Result {
        let server = try BenchServer(room: "bench", media: true)
        defer { server.shutdown() }

        // The listener's screen: a reducer joined to a room where both speakers are on stage and live.
        let state = Mutex(AppState(roles: roles))
        let snapshot = RoomSnapshot(
            roomID: "bench", topic: "", selfID: "eli",
            peers: [
                Peer(id: "ana", name: "Ana", role: .speaker, muted: false, joinedAt: 1),
                Peer(id: "bo", name: "Bo", role: .speaker, muted: false, joinedAt: 2),
                Peer(id: "eli", name: "Eli", joinedAt: 3),
            ], seq: 1)
        state.withLock { _ = reduceApp(&$0, .server(.joined(snapshot), seq: 1, at: MonotonicClock.milliseconds())) }
        let onsets = Mutex<[PeerID: Int64]>([:])
        let latencies = Mutex<[Double]>([])
        let changes = Mutex(0)
        let measuring = Mutex(false)
        let listening = ClientMediaSlot(
            options: ClientMedia.Options(tracksTalkers: true),
            onEvent: { event in
                guard case .heard(let heard) = event else { return }
                let now = MonotonicClock.milliseconds()
                let peers = heard.compactMap { speaker in
                    speaker.peer.map {
                        HeardPeer(peer: PeerID($0), level: speaker.level, talking: speaker.talkingSince != nil)
                    }
                }
                let (before, after) = state.withLock { state in
                    let before = Set(state.talking.keys)
                    _ = reduceApp(&state, .heard(peers, at: now))
                    return (before, Set(state.talking.keys))
                }
                guard measuring.withLock({ $0 }), before != after else { return }
                changes.withLock { $0 += 1 }
                for id in after.subtracting(before) {
                    if let onset = onsets.withLock({ $0.removeValue(forKey: id) }) {
                        latencies.withLock { $0.append(Double(now - onset)) }
                    }
                }
            },
            onFailure: { _ in })
        let listener = try BenchClient(room: server, identity: "eli", role: "audience", relay: nil) {
            listening.handle($0)
        }
        listening.attach(listener.session)
        defer {
            listening.close()
            listener.close()
        }
        try listener.join()

        // The speakers are live on the server from the start; their spurts are their microphones opening and
        // closing (a closed microphone sends nothing).
        var speakers: [(pattern: Pattern, talk: TalkSwitch, mediaSlot: ClientMediaSlot, client: BenchClient)] = []
        defer {
            for speaker in speakers {
                speaker.mediaSlot.close()
                speaker.client.close()
            }
        }
        for pattern in patterns {
            let talk = TalkSwitch(muted: true)
            let mediaSlot = ClientMediaSlot(
                options: ClientMedia.Options(source: .device(.tone(hertz: pattern.hertz)), talk: talk),
                onFailure: { _ in })
            let client = try BenchClient(room: server, identity: pattern.identity, role: "speaker", relay: nil) {
                mediaSlot.handle($0)
            }
            mediaSlot.attach(client.session)
            try client.join()
            try client.unmute()
            speakers.append((pattern, talk, mediaSlot, client))
        }
        // Media settles (the path is probed, the names of the sources arrive) before anything is measured.
        MonotonicClock.sleep(microseconds: 1_500_000)

        measuring.withLock { $0 = true }
        let start = MonotonicClock.milliseconds()
        let end = start + Int64(seconds) * 1000
        var talking = Set<String>()
        var spurts = 0
        var scheduledChanges = 0
        while MonotonicClock.milliseconds() < end {
            let now = MonotonicClock.milliseconds()
            let wanted = Set(speakers.filter { $0.pattern.talks(at: now - start) }.map(\.pattern.identity))
            if wanted != talking {
                scheduledChanges += 1
                for speaker in speakers {
                    let id = speaker.pattern.identity
                    if wanted.contains(id), !talking.contains(id) {
                        spurts += 1
                        onsets.withLock { $0[PeerID(id)] = now }
                        speaker.talk.setMuted(false)
                    } else if !wanted.contains(id), talking.contains(id) {
                        speaker.talk.setMuted(true)
                    }
                }
                talking = wanted
            }
            MonotonicClock.sleep(microseconds: 2_000)
        }
        measuring.withLock { $0 = false }
        let minutes = Double(seconds) / 60
        return Result(
            latencies: latencies.withLock { $0 }.sorted(), spurts: spurts,
            changesPerMinute: Double(changes.withLock { $0 }) / minutes,
            scheduledChangesPerMinute: Double(scheduledChanges) / minutes)
    }

    /// Runs `runs` times and reports the medians of the runs' figures, each run's too, against the targets:
    /// onset → highlight p95 at most 150 ms, and no more highlight changes than the spurts' schedule has.
    public static func report(
        seconds: Int, runs: Int, roles: RoleTable, configuration: String
    ) throws
        -> BenchmarkReport
    {
        var results: [Result] = []
        for _ in 0..<max(1, runs) { results.append(try run(seconds: seconds, roles: roles)) }
        func median(_ values: [Double]) -> Double { BenchmarkSupport.percentile(values.sorted(), 0.5) }
        let p50 = median(results.map { $0.percentile(0.5) })
        let p95 = median(results.map { $0.percentile(0.95) })
        let changes = median(results.map(\.changesPerMinute))
        let scheduled = median(results.map(\.scheduledChangesPerMinute))
        var notes = [
            "\(runs) runs of \(seconds) s, two speakers' overlapping talk spurts through a loopback server; "
                + "medians of the runs (\(configuration) build)"
        ]
        for (index, result) in results.enumerated() {
            notes.append(
                String(
                    format: "run %d: %d spurts, %d highlighted, onset→highlight p50 %.0f ms p95 %.0f ms, "
                        + "%.1f changes/min (schedule %.1f)", index + 1, result.spurts, result.latencies.count,
                    result.percentile(0.5), result.percentile(0.95), result.changesPerMinute,
                    result.scheduledChangesPerMinute))
        }
        let highlighted = median(results.map { Double($0.latencies.count) / Double(max(1, $0.spurts)) * 100 })
        return BenchmarkReport(
            name: "highlight",
            rows: [
                .init("onset→highlight p50", p50, "ms"),
                .init("onset→highlight p95", p95, "ms", target: 150),
                .init("spurts highlighted", highlighted, "%", target: 95, goal: .atLeast),
                .init("highlight changes per minute", changes, "/min", target: scheduled),
                .init("schedule's changes per minute (floor)", scheduled, "/min"),
            ], notes: notes)
    }
}
