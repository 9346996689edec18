import Foundation
import Glibc
import RoomTesting
import RoomTransport
import StrictJSON
import Synchronization
import Testing

extension NodeBot {
    /// Who is in the room as the bot sees it: its last `joined` or `reconnected` snapshot, and the arrivals and
    /// departures since.
    var peersInView: Set<String> {
        var peers = Set<String>()
        for event in events {
            switch event.text("event") {
            case "joined", "reconnected":
                guard case .array(let listed)? = event["peers"] else { continue }
                peers = Set(
                    listed.compactMap { value -> String? in
                        guard case .object(let peer) = value else { return nil }
                        return peer.text("id")
                    })
            case "peer_joined": if let peer = event.text("peer") { peers.insert(peer) }
            case "peer_left": if let peer = event.text("peer") { peers.remove(peer) }
            default: continue
            }
        }
        return peers
    }
}

/// A client of one node in the test's own process, for reconnects faster than a bot process starts: the
/// messages it was sent, in order.
final class QuickClient: Sendable {
    final class Messages: Sendable {
        let texts = Mutex<[String]>([])
        let closed = Atomic<Bool>(false)
    }

    let messages: Messages
    let connection: WebSocketClient

    init(url: String, token: String, loop: EventLoop) throws {
        let messages = Messages()
        self.messages = messages
        connection = try WebSocketClient.connect(
            to: "\(url)?token=\(token)", loop: loop,
            handler: WebSocketClient.Handler(
                onMessage: { payload in
                    guard case .text(let text) = payload else { return }
                    messages.texts.withLock { $0.append(text) }
                },
                onClose: { _, _ in messages.closed.store(true, ordering: .relaxed) }))
    }

    /// Closes the connection and waits for the server's answer to the close.
    func close() {
        connection.close()
        let deadline = Date().addingTimeInterval(5)
        while !messages.closed.load(ordering: .relaxed), Date() < deadline { usleep(1000) }
    }

    /// The room's snapshot, once it came: the peers in it.
    func waitJoined(timeout: Double = 10) throws -> Set<String> {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            for text in messages.texts.withLock({ $0 }) {
                guard case .object(let message)? = try? StrictJSONParser().parse(text),
                    message.text("type") == "joined", case .array(let peers)? = message["peers"]
                else { continue }
                return Set(
                    peers.compactMap { value -> String? in
                        guard case .object(let peer) = value else { return nil }
                        return peer.text("id")
                    })
            }
            usleep(10_000)
        }
        throw ClusterTestError(description: "no joined: \(messages.texts.withLock { $0.suffix(5) })")
    }
}

/// A reconnect right after a drop, through the same node, and a node frozen and thawed: the room keeps the
/// newer connection, and every connection it no longer counts is closed, so nobody is left in the room's
/// messages but out of everyone's list (a ghost).
@Suite(.ownThread, .serialized) struct ClusterGhostTests {
    /// Ana's connection to the room's owner closes and she connects again through it at once: her new join is
    /// decided within the node's 50 ms window for gathering departures, before the old connection's departure
    /// goes out. That departure names the old connection and takes out nobody; Ana stays in the room on every
    /// node and her requests are answered.
    @Test(.enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"))
    func anOldConnectionsDepartureNeverTakesOutTheSameIdentityReconnectedThroughTheSameNode() throws {
        let cluster = try TestCluster(nodes: 2)
        let host = try cluster.bot("hana", role: "host", node: 0)
        try host.wait(for: "joined")
        let watcher = try cluster.bot("wes", role: "audience", node: 1)
        try watcher.wait(for: "joined")
        let minted = try runClubroom([
            "token", "--room", "stage", "--identity", "ana", "--role", "audience", "--secret-file",
            cluster.secretFile, "--name", "Ana",
        ])
        #expect(minted.status == 0)
        let token = minted.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let url = "ws://\(cluster.nodes[0].host):\(cluster.nodes[0].port)/rooms/stage"
        let loop = try EventLoop(name: "test-clients")
        defer { loop.shutdown() }
        var client = try QuickClient(url: url, token: token, loop: loop)
        _ = try client.waitJoined()
        try host.wait(for: "peer_joined") { $0.text("peer") == "ana" }
        for round in 1...3 {
            client.close()
            client = try QuickClient(url: url, token: token, loop: loop)
            #expect(try client.waitJoined() == ["hana", "wes", "ana"])
            client.connection.send(text: #"{"type":"chat","text":"back \#(round)","id":\#(round)}"#)
            for bot in [host, watcher] {
                try bot.wait(for: "chat", timeout: 5) { $0.text("text") == "back \(round)" }
            }
        }
        // Whatever order the departures and joins took, Ana is in the room on both nodes at the end.
        usleep(500_000)
        #expect(host.peersInView == ["hana", "wes", "ana"])
        #expect(watcher.peersInView == ["hana", "wes", "ana"])
    }

    /// A node frozen for 12 s, longer than its clients wait for a sign of life: they give up their connections
    /// and connect again through it, and when it thaws it reads the old connections' ends and the new joins
    /// together. Within 15 s of the thaw every client is in every client's list and hears the speaker.
    @Test(.enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"))
    func aNodeFrozenAndThawedLeavesNoGhostEveryClientIsInTheRoomAndHearsAudioWithin15s() throws {
        let cluster = try TestCluster(nodes: 3)
        let host = try cluster.bot("hana", role: "host", node: 0, tone: 440)
        try host.wait(for: "joined")
        host.send(#"{"cmd":"mute","on":false}"#)
        let listeners = try [("ana", 1), ("ben", 1), ("cy", 1), ("dee", 2), ("eli", 0)].map { name, node in
            let bot = try cluster.bot(name, role: "audience", node: node)
            try bot.wait(for: "joined")
            return bot
        }
        let everyone = Set(["hana"] + listeners.map(\.identity))
        for listener in listeners { #expect(listener.waitForAudio(from: "hana", atLeast: 20)) }

        cluster.nodes[1].freeze()
        usleep(12_000_000)
        cluster.nodes[1].thaw()
        let deadline = Date().addingTimeInterval(15)
        let bots = [host] + listeners
        while Date() < deadline, !bots.allSatisfy({ $0.peersInView == everyone }) { usleep(100_000) }
        for bot in bots { #expect(bot.peersInView == everyone, "\(bot.identity) sees \(bot.peersInView.sorted())") }
        // Each hears the speaker now: half a second more of her audio, still within the 15 s.
        let heard = listeners.map { $0.received(from: "hana") }
        for (listener, before) in zip(listeners, heard) {
            let left = max(0.5, deadline.timeIntervalSinceNow)
            #expect(
                listener.waitForAudio(from: "hana", atLeast: before + 25, timeout: left),
                "\(listener.identity) does not hear hana")
        }
        // And the room answers each of the frozen node's clients.
        for listener in listeners.prefix(3) {
            listener.send(#"{"cmd":"chat","text":"\#(listener.identity) is here"}"#)
            try host.wait(for: "chat", timeout: 5) { $0.text("text") == "\(listener.identity) is here" }
        }
        #expect(listeners.prefix(3).allSatisfy { $0.connectionsLost >= 1 })
    }
}
