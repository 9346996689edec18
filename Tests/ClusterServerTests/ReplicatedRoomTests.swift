import RoomCore
import RoomProtocol
import Testing

@testable import ClusterServer
@testable import RoomServer

/// Copies of a room on several nodes apply the owner's inputs and must stay identical: the same outcomes, the
/// same numbers, the same state, whether a copy saw the whole history or started from a checkpoint.
struct ReplicatedRoomTests {
    static let inputs: [ClusterInput] = [
        .join(node: "a/1", connection: 1, peer: "hana", name: "Hana", role: .host, now: 1_000),
        .join(node: "b/7", connection: 1, peer: "ana", name: "Ana", role: .audience, now: 1_010),
        .join(node: "c/3", connection: 4, peer: "ben", name: "Ben", role: .audience, now: 1_020),
        .request(node: "b/7", peer: "ana", id: .integer(1), .raiseHand, now: 1_030),
        .request(node: "c/3", peer: "ben", id: nil, .raiseHand, now: 1_040),
        .request(node: "a/1", peer: "hana", id: .string("t"), .setTopic("cluster"), now: 1_050),
        .request(node: "a/1", peer: "hana", id: nil, .invite("ben"), now: 1_060),
        .request(node: "c/3", peer: "ben", id: nil, .chat("hi", to: .everyone), now: 1_070),
        .levels(node: "a/1", ["hana": 40], now: 1_080),
        .request(node: "b/7", peer: "ana", id: .integer(2), .raiseHand, now: 1_090),
    ]

    func run(_ room: inout ReplicatedRoom, _ inputs: [ClusterInput]) -> [ServerMessage] {
        var messages: [ServerMessage] = []
        for input in inputs {
            // Every input crosses Redis as its JSON: decode what was encoded.
            let decoded = try! ClusterInput(decoding: input.encoded())
            switch room.apply(decoded) {
            case .joined(.joined(let snapshot, let outcome, _)):
                messages.append(snapshot)
                messages += outcome.deliveries.map(\.message)
            case .joined(.refused): break
            case .outcome(let outcome):
                messages += outcome.deliveries.map(\.message)
                if let error = outcome.error { messages.append(error) }
            }
        }
        return messages
    }

    @Test func aCopyFromACheckpointDecidesExactlyAsTheCopyThatSawEverything() throws {
        var full = ReplicatedRoom(authority: RoomAuthority(name: "r", roles: defaultRoles, seq: 5_000))
        let early = run(&full, Array(Self.inputs.prefix(4)))
        #expect(early.count > 4)
        var restored = try ReplicatedRoom(name: "r", roles: defaultRoles, maxPeers: 100, decoding: full.encoded())
        #expect(restored.encoded() == full.encoded())
        let rest = Array(Self.inputs.dropFirst(4))
        var again = full
        let fromFull = run(&again, rest)
        let fromCheckpoint = run(&restored, rest)
        #expect(fromCheckpoint == fromFull)
        #expect(restored.encoded() == again.encoded())
        // The last raise_hand is refused the same way everywhere.
        #expect(
            fromFull.last?.event == .error(code: .conflict, message: "your hand is already raised", id: .integer(2)))
        #expect(again.authority.seq > 5_000)
    }

    /// What a checkpoint must carry beyond the peers: pending invitations with their time, the role each
    /// token gave (how far a peer may step back up) and who was lowered by someone else.
    @Test func aCheckpointCarriesInvitationsTokenRolesAndWhoWasLowered() throws {
        let early: [ClusterInput] = [
            .join(node: "a/1", connection: 1, peer: "hana", name: "Hana", role: .host, now: 1_000),
            .join(node: "b/7", connection: 1, peer: "ben", name: "Ben", role: .audience, now: 1_010),
            .join(node: "c/3", connection: 2, peer: "cy", name: "Cy", role: .speaker, now: 1_020),
            .join(node: "c/3", connection: 3, peer: "dee", name: "Dee", role: .speaker, now: 1_030),
            .request(node: "a/1", peer: "hana", id: nil, .invite("ben"), now: 1_040),
            .request(node: "c/3", peer: "cy", id: nil, .stepDown, now: 1_050),
            .request(node: "a/1", peer: "hana", id: nil, .setRole("dee", .audience), now: 1_060),
        ]
        let lapse = 1_040 + RoomAuthority.invitationLifetime
        let later: [ClusterInput] = [
            .request(node: "c/3", peer: "cy", id: .integer(1), .setRole("cy", .speaker), now: 1_070),
            .request(node: "c/3", peer: "dee", id: .integer(2), .setRole("dee", .speaker), now: 1_080),
            .expireInvitations(node: "a/1", now: lapse - 1),
            .expireInvitations(node: "a/1", now: lapse),
        ]
        var full = ReplicatedRoom(authority: RoomAuthority(name: "r", roles: defaultRoles))
        _ = run(&full, early)
        var restored = try ReplicatedRoom(name: "r", roles: defaultRoles, maxPeers: 100, decoding: full.encoded())
        #expect(restored.encoded() == full.encoded())
        #expect(restored.authority.invitations["ben"] == Invitation(by: "hana", at: 1_040))
        let fromFull = run(&full, later).map(\.event)
        let fromCheckpoint = run(&restored, later).map(\.event)
        #expect(fromCheckpoint == fromFull)
        #expect(restored.encoded() == full.encoded())
        // Cy steps back up to the speaker its token gives; Dee, lowered by the host, may not; Ben's invitation
        // lapses at its lifetime and not a millisecond before.
        #expect(fromFull.contains(.roleChanged(peer: "cy", role: .speaker, by: "cy", stepUp: nil)))
        #expect(
            fromFull.contains(
                .error(
                    code: .forbidden, message: "someone else moved you down; a host or moderator can bring you back",
                    id: .integer(2))))
        #expect(fromFull.filter { $0 == .inviteExpired(peer: "ben") }.count == 1)
        #expect(fromFull.last == .inviteExpired(peer: "ben"))
        #expect(full.authority.invitations.isEmpty)
    }

    @Test func onlyTheConnectionAPeerIsOnNowCanTakeItAway() {
        var room = ReplicatedRoom(authority: RoomAuthority(name: "r", roles: defaultRoles))
        _ = room.apply(.join(node: "a/1", connection: 1, peer: "ana", name: "Ana", role: .audience, now: 1))
        // Ana moved to node b; her old connection on a closes late.
        _ = room.apply(.join(node: "b/2", connection: 9, peer: "ana", name: "Ana", role: .audience, now: 2))
        let stale: [(Departure, connection: UInt64)] = [(Departure(PeerID("ana"), LeaveReason.disconnected), 1)]
        let late = room.apply(ClusterInput.leave(node: "a/1", stale, now: 3))
        guard case .outcome(let ignored) = late else { Issue.record("not an outcome"); return }
        #expect(ignored.deliveries.isEmpty)
        #expect(room.authority.peers["ana"] != nil)
        let current: [(Departure, connection: UInt64)] = [(Departure(PeerID("ana"), LeaveReason.left), 9)]
        let real = room.apply(ClusterInput.leave(node: "b/2", current, now: 4))
        guard case .outcome(let left) = real else { Issue.record("not an outcome"); return }
        let events = left.deliveries.map(\.message.event)
        #expect(events == [WireEvent.peerLeft(peer: PeerID("ana"), reason: LeaveReason.left)])
        #expect(room.homes.isEmpty)
    }

    @Test func aNodeThatIsGoneTakesItsPeopleAndOnlyThemInOneAnnouncement() {
        var room = ReplicatedRoom(authority: RoomAuthority(name: "r", roles: defaultRoles))
        _ = room.apply(.join(node: "a/1", connection: 1, peer: "hana", name: "Hana", role: .host, now: 1))
        _ = room.apply(.join(node: "b/2", connection: 1, peer: "ana", name: "Ana", role: .audience, now: 2))
        _ = room.apply(.join(node: "b/2", connection: 2, peer: "ben", name: "Ben", role: .audience, now: 3))
        guard case .outcome(let outcome) = room.apply(.nodeGone("b/2", now: 4)) else {
            Issue.record("not an outcome")
            return
        }
        #expect(
            outcome.deliveries.map(\.message.event) == [
                .peersLeft([Departure("ana", .disconnected), Departure("ben", .disconnected)])
            ])
        #expect(Array(room.authority.peers.keys) == ["hana"])
        #expect(room.homes.keys.sorted() == ["hana"])
    }
}
