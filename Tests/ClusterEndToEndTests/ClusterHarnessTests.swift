import Foundation
import RoomTesting
import Testing

/// A TCP connect from `source` to `host:port` made inside the namespace, by a short Python program (the test
/// process itself lives outside it): "connected", "refused" or "silent".
func probeInside(_ namespace: NetworkNamespace, from source: String, to host: String, port: Int) -> String {
    let program = """
        import socket
        s = socket.socket()
        s.bind(("\(source)", 0))
        s.settimeout(0.3)
        try:
            s.connect(("\(host)", \(port)))
            print("connected")
        except ConnectionRefusedError:
            print("refused")
        except OSError:
            print("silent")
        """
    return namespace.run(["python3", "-c", program]).output.trimmingCharacters(in: .whitespacesAndNewlines)
}

@Suite(.serialized) struct ClusterHarnessTests {
    @Test(.enabled(if: NodeAddresses.unbindable() == nil, "127.0.0.2-4 do not all bind here"))
    func threeServeNodesRunOnTheirOwnAddressesAndCanBeFrozenThawedAndKilled() throws {
        let nodes = try NodeAddresses.all.map { try ServeNode(host: $0) }
        for node in nodes {
            #expect(httpStatusLine(host: node.host, port: node.port) == "HTTP/1.1 400 Bad Request")
            #expect(ConnectProbe.probe(to: node.host, port: node.port) == .connected)
        }
        nodes[1].freeze()
        // A frozen node's kernel still accepts the connection, but nothing answers.
        #expect(httpStatusLine(host: nodes[1].host, port: nodes[1].port, milliseconds: 300) == nil)
        nodes[1].thaw()
        #expect(httpStatusLine(host: nodes[1].host, port: nodes[1].port) == "HTTP/1.1 400 Bad Request")
        nodes[2].kill9()
        #expect(nodes[2].process.terminationReason == .uncaughtSignal)
        #expect(nodes[2].process.terminationStatus == SIGKILL)
        #expect(ConnectProbe.probe(to: nodes[2].host, port: nodes[2].port) == .refused)
        #expect(httpStatusLine(host: nodes[0].host, port: nodes[0].port) == "HTTP/1.1 400 Bad Request")
    }

    @Test(
        .enabled(
            if: NetworkNamespace.unavailableReason == nil,
            "partition tests skipped: \(NetworkNamespace.unavailableReason ?? "")"))
    func aPartitionInANamespaceDropsSilentlyUntilHealed() throws {
        let namespace = try NetworkNamespace()
        let node = try ServeNode(host: "127.0.0.2", namespace: namespace)
        // The namespace has a loopback of its own: the node is not reachable from outside it.
        #expect(ConnectProbe.probe(to: "127.0.0.2", port: node.port, milliseconds: 100) != .connected)
        #expect(probeInside(namespace, from: "127.0.0.3", to: "127.0.0.2", port: node.port) == "connected")
        try namespace.partition(from: "127.0.0.3", to: "127.0.0.2")
        #expect(probeInside(namespace, from: "127.0.0.3", to: "127.0.0.2", port: node.port) == "silent")
        #expect(probeInside(namespace, from: "127.0.0.4", to: "127.0.0.2", port: node.port) == "connected")
        try namespace.heal()
        #expect(probeInside(namespace, from: "127.0.0.3", to: "127.0.0.2", port: node.port) == "connected")
        // The PID is the server's own (nsenter does not fork), so faults by PID reach it.
        node.freeze()
        #expect(namespace.run(["kill", "-0", String(node.pid)]).status == 0)
        node.kill9()
        #expect(node.process.terminationStatus == SIGKILL)
        #expect(probeInside(namespace, from: "127.0.0.3", to: "127.0.0.2", port: node.port) == "refused")
    }
}
