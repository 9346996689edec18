import BenchmarkSupport
import ClubroomResources
import ClusterServer
import Platform
import RoomCore
import RoomServer

/// `clubroom bench checkpoint`: what a cluster room's copy costs as it grows, at 1,000 and 10,000 peers.
///
/// - the checkpoint the owner writes to Redis every 32 entries (the whole room as JSON): its size, the time to
///   encode it, and the time a node joining late takes to decode it and restore the room;
/// - one decision the way the owner takes it (on a copy of its room, adopted once Redis has the entry), beside
///   the same decision on the room itself: the copy is what copy-on-write makes O(peers).
public enum CheckpointBenchmark {
    public static func report() throws -> BenchmarkReport {
        let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
        var rows: [BenchmarkReport.Row] = []
        for peers in [1000, 10_000] {
            var room = RoomAuthority(name: "bench", roles: roles)
            _ = room.join(id: "host", name: "Host", role: .host, now: 1)
            for index in 1..<peers {
                _ = room.join(id: PeerID("p\(index)"), name: "Listener \(index)", role: .audience, now: 2)
            }
            let rounds = peers >= 10_000 ? 10 : 40
            var bytes: [UInt8] = []
            let encode = timings(rounds) { bytes = ClusterFormat.encode(room.checkpoint) }
            var restored: RoomAuthority?
            let restore = timings(rounds) {
                if let checkpoint = try? ClusterFormat.checkpoint(decoding: bytes) {
                    restored = RoomAuthority(name: "bench", roles: roles, restoring: checkpoint, maxPeers: peers)
                }
            }
            guard restored?.peers.count == peers else {
                throw PlacedError(place: "bench", problem: "the restored room has not \(peers) peers")
            }
            var now: Timestamp = 10
            let onCopy = timings(rounds * 5) {
                now += 1
                var copy = room
                _ = copy.handle(.raiseHand, from: PeerID("p\(now % Int64(peers - 1) + 1)"), now: now)
                room = copy
            }
            let inPlace = timings(rounds * 5) {
                now += 1
                _ = room.handle(.raiseHand, from: PeerID("p\(now % Int64(peers - 1) + 1)"), now: now)
            }
            let label = "\(peers) peers"
            rows += [
                .init("\(label): checkpoint size", Double(bytes.count) / 1024, "KiB"),
                .init("\(label): checkpoint encoded (median)", percentile(encode, 0.5), "ms"),
                .init("\(label): checkpoint decoded and restored (median)", percentile(restore, 0.5), "ms"),
                .init(
                    "\(label): checkpoint per entry (every 32)", percentile(encode, 0.5) / 32, "ms"),
                .init("\(label): a decision on a copy, adopted (median)", percentile(onCopy, 0.5), "ms"),
                .init("\(label): the same decision in place (median)", percentile(inPlace, 0.5), "ms"),
            ]
        }
        return BenchmarkReport(
            name: "checkpoint: a cluster room's copy at 1,000 and 10,000 peers", rows: rows,
            notes: [
                buildNote, "the room: one host and listeners; decisions are hand raises and lowers",
                "the owner decides on a copy and adopts it once Redis has the entry; the copy's first change copies"
                    + " the room's tables (copy-on-write)",
            ])
    }

    /// Each round's time, in milliseconds.
    static func timings(_ rounds: Int, _ work: () -> Void) -> [Double] {
        (0..<rounds).map { _ in
            let start = MonotonicClock.nanoseconds()
            work()
            return Double(MonotonicClock.nanoseconds() - start) / 1e6
        }
    }
}
