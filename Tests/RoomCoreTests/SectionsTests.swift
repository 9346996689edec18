import RoomTesting
import Testing

@testable import RoomCore

@Suite struct SectionOrderTests {
    @Test func audienceSortsByLowercasedNameScalarsThenID() {
        let names = [
            ("z1", "Zoë"), ("a2", "ana"), ("e", "Émile"), ("c", "陳"), ("a1", "Ana"), ("b", "bob"), ("z2", "zoe"),
        ]
        let peers = [peer("h", "Host", .host)] + names.map { peer($0.0, $0.1) }
        let state = joinedRoom(as: "h", peers: peers)
        #expect(state.audience.map(\.id) == ["a1", "a2", "b", "z2", "z1", "e", "c"])
    }

    @Test func numbersInNamesSortByValue() {
        let names = [
            ("c10", "Crowd 10"), ("c2", "Crowd 2"), ("c100", "crowd 100"), ("c1", "Crowd 1"), ("c9a", "Crowd 9a"),
            ("r7", "Room 7"), ("r007", "Room 007"), ("r0", "Room 0"), ("rx", "Room x"), ("r10d2", "R10D2"),
            ("r2d2", "R2D2"), ("big", "Crowd 99999999999999999999"), ("bigger", "Crowd 100000000000000000000"),
        ]
        let peers = [peer("h", "Host", .host)] + names.map { peer($0.0, $0.1) }
        let state = joinedRoom(as: "h", peers: peers)
        #expect(
            state.audience.map(\.id) == [
                "c1", "c2", "c9a", "c10", "c100", "big", "bigger", "r2d2", "r10d2", "r0", "r007", "r7", "rx",
            ])
        #expect(AudienceKey.fold("Crowd 0010") == "crowd 0210")
        #expect(AudienceKey.fold("Ana") == "ana")
    }

    @Test func stageSortsByRankThenArrivalThenID() {
        let peers = [
            peer("s1", "S1", .speaker, joinedAt: 1), peer("h2", "H2", .host, joinedAt: 5),
            peer("m", "M", .moderator, joinedAt: 3), peer("h1", "H1", .host, joinedAt: 5),
            peer("s0", "S0", .speaker, joinedAt: 2),
        ]
        var state = joinedRoom(as: "m", peers: peers)
        #expect(state.stage.map(\.id) == ["h1", "h2", "m", "s1", "s0"])
        state.apply(.peerJoined(peer("s9", "S9", .speaker, joinedAt: 0)), seq: 11)
        #expect(state.stage.map(\.id) == ["h1", "h2", "m", "s1", "s0", "s9"])
        #expect(state.section(of: "s9") == .stage)
    }

    @Test func raisedHandsAreFirstComeFirstServedThenID() {
        let peers = [
            peer("h", "H", .host), peer("c", "C", hand: 20), peer("b", "B", hand: 10), peer("a", "A", hand: 20),
        ]
        var state = joinedRoom(as: "h", peers: peers)
        #expect(state.raisedHands.map(\.id) == ["b", "a", "c"])
        #expect(state.raisedHands.map { $0.waitingTime(now: 70)! } == [60, 50, 50])
        state.apply(.handRaised("h", at: 5), seq: 11)
        #expect(state.raisedHands.map(\.id) == ["b", "a", "c"], "a hand on stage does not join the queue")
        #expect(state.queuePosition(of: "c") == 3)
        #expect(state.section(of: "c") == .raisedHands)
    }

    @Test func sectionsAreViewsOfTheStateAndIndexable() {
        let state = joinedRoom(as: "dara")
        #expect(state.stage[1].name == "Bo")
        #expect(Array(state.stage.ids) == ["ana", "bo", "chen"])
        #expect(state.audience.count == 1)
    }
}

/// Drives a room through a long seeded run of events and checks, after every event, that the incrementally
/// kept sections equal a sort from scratch by the documented rules.
@Suite struct IncrementalSectionTests {
    struct Model {
        var peers: [PeerID: Peer] = [:]
        var arrival: [PeerID: Int] = [:]
        var nextArrival = 0

        mutating func set(_ peer: Peer) {
            let wasOnStage = peers[peer.id].map { roles.isOnStage($0.role) } ?? false
            if roles.isOnStage(peer.role) && !wasOnStage {
                arrival[peer.id] = nextArrival
                nextArrival += 1
            }
            if !roles.isOnStage(peer.role) { arrival[peer.id] = nil }
            peers[peer.id] = peer
        }

        mutating func remove(_ id: PeerID) {
            peers[id] = nil
            arrival[id] = nil
        }

        var stage: [PeerID] {
            peers.values.filter { roles.isOnStage($0.role) }
                .sorted {
                    (roles.rank(of: $0.role), arrival[$0.id]!, $0.id) < (
                        roles.rank(of: $1.role), arrival[$1.id]!, $1.id
                    )
                }
                .map(\.id)
        }

        var hands: [PeerID] {
            peers.values.filter { !roles.isOnStage($0.role) && $0.handRaisedAt != nil }
                .sorted { ($0.handRaisedAt!, $0.id) < ($1.handRaisedAt!, $1.id) }.map(\.id)
        }

        var audience: [PeerID] {
            peers.values.filter { !roles.isOnStage($0.role) && $0.handRaisedAt == nil }
                .map { (folded: Array($0.name.lowercased().utf8), id: $0.id) }
                .sorted { $0.folded != $1.folded ? $0.folded.lexicographicallyPrecedes($1.folded) : $0.id < $1.id }
                .map(\.id)
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func matchesASortFromScratch(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let names = ["Ana", "ana", "Bo", "Chen", "Émile", "zoë", "Zoe", "陳", "Dara", "Eli", "eli"]
        let roleNames: [RoleName] = [.host, .moderator, .speaker, .audience, .audience]
        var model = Model()
        let initial = (0..<30).map { i in
            peer("p\(i)", names[i % names.count], roleNames[i % roleNames.count], joinedAt: Int64(30 - i))
        }
        for p in initial.sorted(by: { ($0.joinedAt, $0.id) < ($1.joinedAt, $1.id) }) { model.set(p) }
        var state = joinedRoom(as: "p0", peers: initial, seq: 1)
        var nextID = 30
        for step in 0..<1500 {
            let seq = UInt64(step + 2)
            let ids = Array(model.peers.keys).sorted()
            let someone = ids.isEmpty ? nil : ids[Int.random(in: 0..<ids.count, using: &random)]
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                let p = peer(
                    "p\(nextID)", names.randomElement(using: &random)!, roleNames.randomElement(using: &random)!,
                    joinedAt: Int64(step))
                nextID += 1
                model.set(p)
                state.apply(.peerJoined(p), seq: seq)
            case 1:
                guard let id = someone, id != "p0" else { continue }
                model.remove(id)
                state.apply(Bool.random(using: &random) ? .peerLeft(id) : .removed(id, reason: "", by: nil), seq: seq)
            case 2:
                guard let id = someone else { continue }
                var p = model.peers[id]!
                let role = roleNames.randomElement(using: &random)!
                state.apply(.roleChanged(id, to: role, by: nil), seq: seq)
                if p.role != role {
                    p.role = role
                    if roles.isOnStage(role) { p.handRaisedAt = nil }
                    model.set(p)
                }
            case 3, 4:
                guard let id = someone else { continue }
                var p = model.peers[id]!
                let at = Int64.random(in: 0..<50, using: &random)
                state.apply(.handRaised(id, at: at), seq: seq)
                if p.handRaisedAt == nil {
                    p.handRaisedAt = at
                    model.set(p)
                }
            default:
                guard let id = someone else { continue }
                var p = model.peers[id]!
                p.handRaisedAt = nil
                model.set(p)
                state.apply(.handLowered(id, by: nil), seq: seq)
            }
            let (stage, hands, audience) = (model.stage, model.hands, model.audience)
            if Array(state.stage.ids) != stage || Array(state.raisedHands.ids) != hands
                || Array(state.audience.ids) != audience
            {
                #expect(Array(state.stage.ids) == stage, "after step \(step)")
                #expect(Array(state.raisedHands.ids) == hands, "after step \(step)")
                #expect(Array(state.audience.ids) == audience, "after step \(step)")
                return
            }
        }
        #expect(state.peers == model.peers)
        let rebuilt = Sections(peers: state.peers.values, roles: roles)
        #expect(rebuilt.hands == state.sections.hands)
        #expect(rebuilt.audience == state.sections.audience)
    }

    @Test func aLargeRoomSplitsIntoChunksAndStaysSorted() {
        var state = joinedRoom(as: "h", peers: [peer("h", "Host", .host)], seq: 1)
        var random = SplitMix64(seed: 42)
        var expected: [(String, PeerID)] = []
        for i in 0..<3000 {
            let name = String((0..<6).map { _ in "abcdefghij".randomElement(using: &random)! })
            let id = PeerID("u\(i)")
            state.apply(.peerJoined(peer(id.rawValue, name)), seq: UInt64(i + 2))
            expected.append((name, id))
        }
        expected.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        #expect(Array(state.audience.ids) == expected.map(\.1))
        #expect(state.audience[1500].id == expected[1500].1)
    }
}
