import BenchmarkSupport
import Platform
import RoomCore

/// Times the room store: how fast events land in the state and its screen sections in a large room.
///
/// Every figure is the median over `repetitions` runs, each on a freshly built room so no run pays for
/// copying another's storage. Targets (release build): 10,000 joins in ≤ 20 ms, and one event plus the
/// section update in a 10,000-peer room ≤ 50 µs median.
public struct StoreBenchmark {
    /// The room size the targets are stated for.
    public static let defaultPeers = 10_000

    /// Runs every measurement and returns the report. `peers` sets the room size; `repetitions` how many
    /// runs each median is taken over. Takes a few seconds in a release build.
    public static func run(roles: RoleTable, peers: Int = defaultPeers, repetitions: Int = 7) -> BenchmarkReport {
        let peers = max(peers, 200)
        let repetitions = max(repetitions, 1)
        let room = Room(size: peers)
        let clock = ContinuousClock()

        var joins: [Double] = []
        var snapshots: [Double] = []
        var hands: [Double] = []
        var roleChanges: [Double] = []
        var perEvent: [Double] = []
        perEvent.reserveCapacity(repetitions * 4_000)

        for _ in 0..<repetitions {
            // Joins one by one into a room holding only its host.
            var state = RoomState(roles: roles)
            _ = reduce(&state, .server(.joined(room.hostOnly), seq: 1))
            let joinActions = room.joinActions
            joins.append(
                milliseconds(
                    clock.measure {
                        for action in joinActions { _ = reduce(&state, action) }
                    }))
            Self.keep(state)

            var full = RoomState(roles: roles)
            snapshots.append(milliseconds(clock.measure { _ = reduce(&full, .server(.joined(room.full), seq: 1)) }))

            hands.append(milliseconds(clock.measure { room.raiseAndLower(&full, seq: 10) }))
            roleChanges.append(milliseconds(clock.measure { room.changeRoles(&full, seq: 10_000) }))
            Self.keep(full)

            // One event at a time, each followed by reading what the screen shows, timed separately.
            var timed = RoomState(roles: roles)
            _ = reduce(&timed, .server(.joined(room.full), seq: 1))
            for action in room.mixedActions {
                let start = clock.now
                _ = reduce(&timed, action)
                Self.readScreen(timed)
                perEvent.append(microseconds(start.duration(to: clock.now)))
            }
            Self.keep(timed)
        }

        let handCount = room.handPeers.count
        let roleCount = room.rolePeers.count
        let size = peers.formatted
        return BenchmarkReport(
            name: "store",
            rows: [
                .init("\(size) joins", median(joins), "ms", target: 20),
                .init("joined snapshot of \(size) peers", median(snapshots), "ms"),
                .init("\(handCount.formatted) hand raises and lowers, \(size)-peer room", median(hands), "ms"),
                .init("\(roleCount.formatted) role changes, \(size)-peer room", median(roleChanges), "ms"),
                .init("event + section update, median, \(size)-peer room", percentile(perEvent, 0.5), "µs", target: 50),
                .init("event + section update, p99, \(size)-peer room", percentile(perEvent, 0.99), "µs"),
            ],
            notes: [
                "\(buildConfiguration) build; medians of \(repetitions) runs; \(perEvent.count.formatted) timed events"
            ])
    }

    #if DEBUG
    static let buildConfiguration = "debug (figures are not comparable to the targets)"
    #else
    static let buildConfiguration = "release"
    #endif

    /// What the room screen reads after an event: section sizes and the first screenful of each.
    static func readScreen(_ state: RoomState) {
        var checksum = state.stage.count &+ state.raisedHands.count &+ state.audience.count
        for peer in state.stage.prefix(12) { checksum &+= peer.level }
        for peer in state.raisedHands.prefix(6) { checksum &+= Int(peer.handRaisedAt ?? 0) }
        for peer in state.audience.prefix(40) { checksum &+= peer.name.utf8.count }
        keep(checksum)
    }

    /// Keeps the optimizer from dropping work whose result is otherwise unused.
    @inline(never)
    static func keep<T>(_ value: T) {
        withExtendedLifetime(value) {}
    }

    static func milliseconds(_ d: Duration) -> Double { microseconds(d) / 1000 }

    static func microseconds(_ d: Duration) -> Double {
        d.inSeconds * 1e6
    }

    static func median(_ values: [Double]) -> Double { percentile(values, 0.5) }
}

/// A deterministic room: one host, a few moderators and speakers, everyone else in the audience, with
/// varied names (ASCII, accented, CJK) so the audience order does real work.
struct Room {
    let hostOnly: RoomSnapshot
    let full: RoomSnapshot
    let joinActions: [RoomAction]
    let handPeers: [PeerID]
    let rolePeers: [PeerID]
    let mixedActions: [RoomAction]

    init(size: Int) {
        var random = SplitMix(seed: 0xC1AB)
        let host = Peer(id: "host", name: "Host", role: .host, joinedAt: 0)
        var everyone = [host]
        for i in 1..<size {
            let role: RoleName = i <= 4 ? .moderator : i <= 24 ? .speaker : .audience
            everyone.append(Peer(id: PeerID("p\(i)"), name: Self.name(&random), role: role, joinedAt: Int64(i)))
        }
        hostOnly = RoomSnapshot(roomID: "bench", selfID: "host", peers: [host], seq: 1)
        full = RoomSnapshot(roomID: "bench", selfID: "host", peers: everyone, seq: 1)
        joinActions = everyone.dropFirst().enumerated().map { offset, peer in
            .server(.peerJoined(peer), seq: UInt64(offset + 2))
        }
        let audience = everyone.filter { $0.role == .audience }.map(\.id)
        handPeers = Array(audience.prefix(1_000))
        rolePeers = Array(audience.suffix(100))

        var mixed: [RoomAction] = []
        var seq: UInt64 = 100_000
        func add(_ event: ServerEvent) {
            seq += 1
            mixed.append(.server(event, seq: seq))
        }
        for (i, id) in handPeers.prefix(500).enumerated() { add(.handRaised(id, at: Int64(i))) }
        for (i, id) in rolePeers.prefix(50).enumerated() {
            add(.roleChanged(id, to: .speaker, by: "host"))
            add(.speakers([SpeakerLevel(peer: id, level: i % 100)]))
            add(.roleChanged(id, to: .audience, by: "host"))
        }
        for id in handPeers.prefix(500) { add(.handLowered(id, by: nil)) }
        for i in 0..<500 {
            let id = PeerID("late\(i)")
            add(.peerJoined(Peer(id: id, name: Self.name(&random), joinedAt: Int64(size + i))))
            add(.muteChanged(id, muted: false, by: nil))
            add(.peerLeft(id))
        }
        mixedActions = mixed
    }

    func raiseAndLower(_ state: inout RoomState, seq: UInt64) {
        var seq = seq
        for (i, id) in handPeers.enumerated() {
            seq += 1
            _ = reduce(&state, .server(.handRaised(id, at: Int64(i)), seq: seq))
        }
        for id in handPeers {
            seq += 1
            _ = reduce(&state, .server(.handLowered(id, by: nil), seq: seq))
        }
    }

    func changeRoles(_ state: inout RoomState, seq: UInt64) {
        for (i, id) in rolePeers.enumerated() {
            _ = reduce(&state, .server(.roleChanged(id, to: .speaker, by: "host"), seq: seq + UInt64(i)))
        }
    }

    static func name(_ random: inout SplitMix) -> String {
        let syllables = ["ka", "lo", "mi", "an", "ré", "zu", "Be", "chi", "Da", "o", "陳", "ø", "Ya", "ne"]
        let count = Int(random.next() % 3) + 2
        return (0..<count).map { _ in syllables[Int(random.next() % UInt64(syllables.count))] }.joined()
    }
}

/// A tiny deterministic generator so every run measures the same room.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Int {
    /// 10000 as "10,000", without depending on the locale.
    var formatted: String {
        let digits = Array(String(self))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(d)
        }
        return out
    }
}
