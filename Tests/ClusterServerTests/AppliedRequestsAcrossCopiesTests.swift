import RoomCore
import RoomProtocol
import Testing

@testable import ClusterServer
@testable import RoomServer

/// A request id takes effect at most once per identity in a cluster's copies of a room, across a checkpoint (an
/// owner change).
@Suite struct AppliedRequestsAcrossCopiesTests {
    /// A new owner starts from the checkpoint (or the entries after it): a request the old owner applied, sent
    /// again under its id, is answered `already_applied` and applied nowhere a second time.
    @Test func aCopyFromACheckpointKnowsTheIdsTheOwnerApplied() throws {
        var owner = ReplicatedRoom(authority: RoomAuthority(name: "r", roles: defaultRoles, seq: 5_000))
        let inputs: [ClusterInput] = [
            .join(node: "a/1", connection: 1, peer: "hana", name: "Hana", role: .host, now: 1_000),
            .join(node: "b/7", connection: 1, peer: "ana", name: "Ana", role: .audience, now: 1_010),
            .request(node: "b/7", peer: "ana", id: .string("s-1"), .chat("hello", to: .everyone), now: 1_020),
        ]
        for input in inputs { _ = owner.apply(try ClusterInput(decoding: input.encoded())) }
        var successor = try ReplicatedRoom(name: "r", roles: defaultRoles, maxPeers: 100, decoding: owner.encoded())
        #expect(successor.encoded() == owner.encoded())
        let retry = ClusterInput.request(
            node: "b/7", peer: "ana", id: .string("s-1"), .chat("hello", to: .everyone), now: 1_030)
        guard case .outcome(let outcome) = successor.apply(try ClusterInput(decoding: retry.encoded())) else {
            Issue.record("a request gives an outcome")
            return
        }
        #expect(refusal(outcome)?.code == .alreadyApplied)
        #expect(outcome.deliveries.isEmpty)
        #expect(successor.authority.chat.map(\.text) == ["hello"])
    }

    /// A refusal survives the checkpoint too: a new owner answers a copy of a refused request with that refusal.
    @Test func aCopyFromACheckpointKnowsTheRefusalsTheOwnerGave() throws {
        var owner = ReplicatedRoom(authority: RoomAuthority(name: "r", roles: defaultRoles, seq: 5_000))
        let inputs: [ClusterInput] = [
            .join(node: "a/1", connection: 1, peer: "hana", name: "Hana", role: .host, now: 1_000),
            .join(node: "b/7", connection: 1, peer: "ana", name: "Ana", role: .audience, now: 1_010),
            .request(node: "b/7", peer: "ana", id: .string("s-1"), .lowerHand, now: 1_020),
        ]
        for input in inputs { _ = owner.apply(try ClusterInput(decoding: input.encoded())) }
        var successor = try ReplicatedRoom(name: "r", roles: defaultRoles, maxPeers: 100, decoding: owner.encoded())
        #expect(successor.encoded() == owner.encoded())
        let first = owner.authority.applied.decision(.string("s-1"), from: "ana")?.refusal
        #expect(first.map { refusalCode($0) } == .conflict)
        _ = successor.apply(
            try ClusterInput(
                decoding: ClusterInput.request(node: "b/7", peer: "ana", id: .string("r-1"), .raiseHand, now: 1_030)
                    .encoded()))
        let copy = ClusterInput.request(node: "b/7", peer: "ana", id: .string("s-1"), .lowerHand, now: 1_040)
        guard case .outcome(let outcome) = successor.apply(try ClusterInput(decoding: copy.encoded())) else {
            Issue.record("a request gives an outcome")
            return
        }
        #expect(outcome.error == first)
        #expect(successor.authority.peers["ana"]?.handRaisedAt == 1_030)
    }

    func refusalCode(_ message: ServerMessage) -> ErrorCode? {
        if case .error(let code, _, _) = message.event { return code }
        return nil
    }
}
