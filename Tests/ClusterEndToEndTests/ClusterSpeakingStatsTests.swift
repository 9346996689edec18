import Foundation
import RoomTesting
import StrictJSON
import Testing

/// Speaking time in a cluster: each node reports its own speakers, every copy of the room counts them, and a host
/// or moderator on any node gets every speaker's time.
@Suite(.ownThread, .serialized) struct ClusterSpeakingStatsTests {
    /// `peer`, seconds and turns of each person of a `stats` event.
    func tallies(_ answer: JSONObject) -> [(peer: String, seconds: Double, turns: Int64)] {
        guard case .array(let people)? = answer["people"] else { return [] }
        return people.compactMap { value in
            guard case .object(let person) = value, let peer = person.text("peer"),
                case .integer(let turns)? = person["turns"]
            else { return nil }
            switch person["seconds"] {
            case .double(let seconds)?: return (peer, seconds, turns)
            case .integer(let seconds)?: return (peer, Double(seconds), turns)
            default: return nil
            }
        }
    }

    @Test(.enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"))
    func hostsOnEveryNodeSeeTheSpeakersOfEveryNode() throws {
        let cluster = try TestCluster(nodes: 2)
        let host = try cluster.bot("hana", role: "host", node: 0)
        try host.wait(for: "joined")
        let mo = try cluster.bot("mo", role: "moderator", node: 1)
        try mo.wait(for: "joined")
        // Listeners with a tone each, one on each node: nothing of theirs counts until they are on the stage.
        let ana = try cluster.bot("ana", role: "audience", node: 1, tone: 440)
        try ana.wait(for: "joined")
        let ben = try cluster.bot("ben", role: "audience", node: 0, tone: 660)
        try ben.wait(for: "joined")
        try host.wait(for: "peer_joined") { $0.text("peer") == "ben" }

        var talked: [String: Double] = [:]
        for (bot, name, seconds) in [(ana, "ana", 4.0), (ben, "ben", 3.0)] {
            host.send(#"{"cmd":"set_role","peer":"\#(name)","role":"speaker"}"#)
            try host.wait(for: "mute_changed", timeout: 15) { $0.text("peer") == name && $0["muted"] == .bool(false) }
            let began = Date()
            usleep(UInt32(seconds * 1_000_000))
            bot.send(#"{"cmd":"mute","on":true}"#)
            talked[name] = Date().timeIntervalSince(began)
            try host.wait(for: "mute_changed", timeout: 15) { $0.text("peer") == name && $0["muted"] == .bool(true) }
        }
        usleep(500_000)
        host.send(#"{"cmd":"stats","id":"h"}"#)
        mo.send(#"{"cmd":"stats","id":"m"}"#)
        let answers = [
            try host.wait(for: "stats", timeout: 15) { $0["id"] == .string("h") },
            try mo.wait(for: "stats", timeout: 15) { $0["id"] == .string("m") },
        ]
        for answer in answers {
            let people = tallies(answer)
            #expect(people.map(\.peer) == ["ana", "ben"], "\(answer)")
            for person in people {
                let expected = talked[person.peer] ?? 0
                #expect(abs(person.seconds - expected) <= expected / 10, "\(person.peer): \(person) for \(expected) s")
                #expect(person.turns == 1, "\(person)")
            }
        }
    }
}
