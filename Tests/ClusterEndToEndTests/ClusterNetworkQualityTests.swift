import ClientAudio
import Dispatch
import Foundation
import RoomCore
import RoomTesting
import StrictJSON
import Testing

@testable import AudioBenchmarks

/// An in-process client of a node whose media goes through the project's impairing relay (a lossy network in
/// front of it), as in the one-server network quality test.
final class LossyClient {
    let client: BenchClient
    private let slot: ClientMediaSlot
    private let path = DispatchSemaphore(value: 0)
    static let clean = LinkImpairment(lossPercent: 0, baseDelayMilliseconds: 1, jitterMilliseconds: 0, seed: 5)

    init(_ identity: String, role: String, room: String = "stage", through node: ServeNode, secretFile: String) throws {
        let minted = try runClubroom([
            "token", "--room", room, "--identity", identity, "--role", role, "--secret-file", secretFile, "--name",
            identity.capitalized,
        ])
        guard minted.status == 0 else { throw ClusterTestError(description: "clubroom token: \(minted)") }
        let token = minted.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let path = path
        let slot = ClientMediaSlot(
            options: ClientMedia.Options(),
            onEvent: { event in
                if case .path = event { path.signal() }
            },
            onFailure: { _ in })
        self.slot = slot
        client = try BenchClient(
            url: "ws://\(node.host):\(node.port)/rooms/\(room)", token: token, identity: identity, relay: Self.clean
        ) { slot.handle($0) }
        slot.attach(client.session)
        try client.join()
        guard path.wait(timeout: .now() + 10) == .success else {
            throw ClusterTestError(description: "\(identity)'s media did not start within 10 s")
        }
    }

    /// Loses `percent` of what the node sends this client from now on (0: clean again).
    func lose(_ percent: Int) throws {
        let relay = try #require(client.relay)
        var link = Self.clean
        link.lossPercent = Double(percent)
        relay.change(to: link)
    }

    func close() {
        _ = slot.close()
        client.close()
    }
}

/// Network quality in a cluster: each node measures its own people, and a score that changed travels through the
/// room's stream to the other nodes, which tell their own people by the one server's rule. Real Redis, two
/// `clubroom serve` nodes, bots, and in-process clients behind the impairing relay.
@Suite(.ownThread, .serialized) struct ClusterNetworkQualityTests {
    /// The score of `peer` in the first `network_quality` event the bot printed from line `start` on whose score
    /// `accepts` takes, waiting up to `seconds`; with the line where it was.
    func score(
        of peer: String, at bot: NodeBot, from start: Int, seconds: Double, _ accepts: (Int) -> Bool
    ) -> (score: Int, line: Int)? {
        var found: Int?
        let line = bot.output.wait(from: start, timeout: seconds) { line in
            guard let score = Self.scores(in: line)[peer], accepts(score) else { return false }
            found = score
            return true
        }
        guard let line, let found else { return nil }
        return (found, line)
    }

    /// Each peer's score in one printed line, when it is a `network_quality` event.
    static func scores(in line: String) -> [String: Int] {
        guard case .object(let event)? = try? StrictJSONParser().parse(line),
            event["event"] == .string("network_quality"), case .array(let peers)? = event["peers"]
        else { return [:] }
        var scores: [String: Int] = [:]
        for case .object(let entry) in peers {
            if case .string(let id)? = entry["peer"], case .integer(let score)? = entry["score"] {
                scores[id] = Int(score)
            }
        }
        return scores
    }

    /// A speaking host on node B, so that a listener on node A hears (and loses) audio relayed between nodes.
    func speakingHost(_ cluster: TestCluster) throws -> NodeBot {
        let host = try cluster.bot("hana", role: "host", node: 1, tone: 440)
        try host.wait(for: "joined")
        host.send(#"{"cmd":"mute","on":false}"#)
        try host.wait(for: "mute_changed") { $0.text("peer") == "hana" && $0["muted"] == .bool(false) }
        return host
    }

    @Test(.enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"))
    func aLossySpeakerOnOneNodeIsPoorForTheHostAndAListenerOnAnotherAndRecovers() throws {
        let cluster = try TestCluster(nodes: 2)
        let host = try speakingHost(cluster)
        let listener = try cluster.bot("lee", role: "audience", node: 1)
        try listener.wait(for: "joined")
        let speaker = try LossyClient("sam", role: "speaker", through: cluster.nodes[0], secretFile: cluster.secretFile)
        defer { speaker.close() }

        // A clean start: node A's score of its speaker reaches both people on node B.
        let good = score(of: "sam", at: host, from: 0, seconds: 15) { $0 >= 4 }
        #expect(good != nil, "hana saw \(host.output.all.suffix(8))")
        #expect(score(of: "sam", at: listener, from: 0, seconds: 5) { $0 >= 4 } != nil)

        var hostFrom = host.output.all.count
        var listenerFrom = listener.output.all.count
        try speaker.lose(30)
        let lossBegan = Date()
        let poor = score(of: "sam", at: host, from: hostFrom, seconds: 5) { $0 <= 2 }
        #expect(poor != nil, "hana saw \(host.output.all.dropFirst(hostFrom))")
        if poor != nil {
            print("cluster network quality: poor \(Date().timeIntervalSince(lossBegan)) s after the loss began")
        }
        let remaining = max(0.1, 5 - Date().timeIntervalSince(lossBegan))
        #expect(
            score(of: "sam", at: listener, from: listenerFrom, seconds: remaining) { $0 <= 2 } != nil,
            "lee saw \(listener.output.all.dropFirst(listenerFrom))")

        hostFrom = host.output.all.count
        listenerFrom = listener.output.all.count
        try speaker.lose(0)
        let lossStopped = Date()
        let recovered = score(of: "sam", at: host, from: hostFrom, seconds: 5) { $0 >= 4 }
        #expect(recovered != nil, "hana saw \(host.output.all.dropFirst(hostFrom))")
        if recovered != nil {
            print(
                "cluster network quality: recovered \(Date().timeIntervalSince(lossStopped)) s after the loss stopped")
        }
        #expect(
            score(
                of: "sam", at: listener, from: listenerFrom,
                seconds: max(0.1, 5 - Date().timeIntervalSince(lossStopped))
            ) {
                $0 >= 4
            } != nil, "lee saw \(listener.output.all.dropFirst(listenerFrom))")
        // The speaker was told of its own connection too, by its own node.
        #expect(speaker.client.qualities.contains { $0.peer == "sam" && $0.score <= 2 })
    }

    @Test(.enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"))
    func anAudienceMembersScoreReachesHostsOnAnotherNodeButNotOtherListeners() throws {
        let cluster = try TestCluster(nodes: 2)
        let host = try speakingHost(cluster)
        let listener = try cluster.bot("lee", role: "audience", node: 1)
        try listener.wait(for: "joined")
        let member = try LossyClient("ann", role: "audience", through: cluster.nodes[0], secretFile: cluster.secretFile)
        defer { member.close() }
        try member.lose(30)

        let poor = score(of: "ann", at: host, from: 0, seconds: 15) { $0 <= 2 }
        #expect(poor != nil, "hana saw \(host.output.all.suffix(8))")
        // Ann hears of her own connection from her node.
        let deadline = Date().addingTimeInterval(5)
        while !member.client.qualities.contains(where: { $0.peer == "ann" && $0.score <= 2 }), Date() < deadline {
            usleep(50_000)
        }
        #expect(member.client.qualities.contains { $0.peer == "ann" && $0.score <= 2 })
        // Lee, on the host's node, hears the stage's scores (the host's) and none of Ann's.
        #expect(score(of: "hana", at: listener, from: 0, seconds: 5) { _ in true } != nil)
        usleep(1_000_000)
        let leeSaw = listener.output.all.flatMap { Self.scores(in: $0).keys }
        #expect(!leeSaw.contains("ann"), "lee saw \(listener.output.all.suffix(8))")

        // A moderator who comes later through node B is given, by node B's copy, Ann's score announced before.
        try member.lose(0)
        let recovered = score(of: "ann", at: host, from: poor?.line ?? 0, seconds: 10) { $0 >= 4 }
        #expect(recovered != nil, "hana saw \(host.output.all.suffix(8))")
        let moderator = try cluster.bot("mo", role: "moderator", node: 1)
        try moderator.wait(for: "joined")
        #expect(score(of: "ann", at: moderator, from: 0, seconds: 5) { $0 >= 4 } != nil)
        #expect(!listener.output.all.flatMap { Self.scores(in: $0).keys }.contains("ann"))
    }
}
