import RoomCore
import RoomProtocol
import Testing

@testable import RoomServer

/// What the room authority reports to the lobby's directory: each change of the room's entry, exactly once.
@Suite struct ListingReportTests {
    func listing(
        _ room: RoomAuthority, stage: [(String, RoleName)], listeners: Int, hands: Int = 0, topic: String = "",
        startedAt: Timestamp = 1, audience: [String] = []
    ) -> RoomListing {
        RoomListing(
            room: room.name, topic: topic, stage: stage.map { .init(name: $0.0, role: $0.1) }, onStage: stage.count,
            listeners: listeners, raisedHands: hands, startedAt: startedAt, audience: audience)
    }

    @Test func aRoomStartsWithItsFirstPersonAndChangesWithEveryJoin() {
        var room = RoomAuthority(name: "jazz", roles: defaultRoles)
        guard case .joined(_, let first, _) = room.join(id: "ana", name: "Ana", role: .host, now: 1) else {
            Issue.record("not joined")
            return
        }
        #expect(first.listing == .added(listing(room, stage: [("Ana", .host)], listeners: 0), .started))
        guard case .joined(_, let second, _) = room.join(id: "eli", name: "Eli", role: .audience, now: 2) else {
            Issue.record("not joined")
            return
        }
        #expect(second.listing == .updated(listing(room, stage: [("Ana", .host)], listeners: 1, audience: ["Eli"])))
        // A second connection of someone already here changes nothing the lobby sees.
        guard case .joined(_, let again, _) = room.join(id: "eli", name: "Eli", role: .audience, now: 3) else {
            Issue.record("not joined")
            return
        }
        #expect(again.listing == nil)
    }

    @Test func theStageIsNamedHighestRoleFirstAndCountedWhole() {
        var room = RoomAuthority(name: "big", roles: defaultRoles)
        _ = room.join(id: "s1", name: "Sam", role: .speaker, now: 1)
        _ = room.join(id: "bo", name: "Bo", role: .moderator, now: 2)
        _ = room.join(id: "ana", name: "Ana", role: .host, now: 3)
        for index in 0..<8 {
            _ = room.join(id: PeerID("x\(index)"), name: "X\(index)", role: .speaker, now: 10 + Int64(index))
        }
        let entry = room.listing
        #expect(entry?.onStage == 11)
        #expect(entry?.stage.count == RoomListing.maxStageNames)
        #expect(entry?.stage.prefix(4).map(\.name) == ["Ana", "Bo", "Sam", "X0"])
        #expect(entry?.startedAt == 1)
    }

    @Test func handsRolesAndTopicAreReportedAndChatIsNot() {
        var room = populatedRoom()
        let raised = room.handle(.raiseHand, from: "eli", now: 10)
        #expect(raised.listing.map { if case .updated(let l) = $0 { l.raisedHands } else { -1 } } == 1)
        let chat = room.handle(.chat("hi", to: .everyone), from: "eli", now: 11)
        #expect(chat.listing == nil)
        let promoted = room.handle(.setRole("eli", .speaker), from: "ana", now: 12)
        guard case .updated(let now)? = promoted.listing else {
            Issue.record("no update: \(String(describing: promoted.listing))")
            return
        }
        #expect(now.onStage == 4 && now.listeners == 1 && now.raisedHands == 0)
        #expect(now.stage.map(\.name) == ["Ana", "Bo", "Chen", "Eli"])
        let topic = room.handle(.setTopic("Friday terminal hour"), from: "bo", now: 13)
        #expect(topic.listing.map { if case .updated(let l) = $0 { l.topic } else { "" } } == "Friday terminal hour")
        let refused = room.handle(.setTopic("x"), from: "fay", now: 14)
        #expect(refused.error != nil && refused.listing == nil)
    }

    @Test func theLastToLeaveEmptiesItAndTheNextStartsItAgain() {
        var room = RoomAuthority(name: "jazz", roles: defaultRoles)
        _ = room.join(id: "ana", name: "Ana", role: .host, now: 1)
        let left = room.leave("ana", reason: .left, now: 5)
        #expect(left.listing == .removed(room: "jazz", .empty))
        #expect(room.liveSince == nil)
        guard case .joined(_, let back, _) = room.join(id: "bo", name: "Bo", role: .audience, now: 9) else {
            Issue.record("not joined")
            return
        }
        #expect(
            back.listing == .added(listing(room, stage: [], listeners: 1, startedAt: 9, audience: ["Bo"]), .started))
    }

    @Test func endingRemovesItAndReopeningStartsIt() {
        var room = populatedRoom()
        let ended = room.handle(.endRoom(reason: "bye"), from: "ana", now: 20)
        #expect(ended.listing == .removed(room: "lobby", .ended))
        guard case .joined(_, let reopened, _) = room.join(id: "ana", name: "Ana", role: .host, now: 30) else {
            Issue.record("not joined")
            return
        }
        #expect(
            reopened.listing == .added(listing(room, stage: [("Ana", .host)], listeners: 0, startedAt: 30), .started))
    }

    @Test func anUnlistedRoomReportsNothingUntilItIsListedAgain() {
        var room = populatedRoom()
        let unlisted = room.handle(.setListed(false), from: "ana", id: .integer(1), now: 10)
        #expect(unlisted.listing == .removed(room: "lobby", .unlisted))
        #expect(events(unlisted) == [.listingChanged(listed: false, by: "ana")])
        #expect(unlisted.changes.contains(.listed(false)))
        if case .joined(let snapshot) = room.snapshot(for: "eli", resumed: false).event {
            #expect(snapshot.listed == false)
        } else {
            Issue.record("not a snapshot")
        }
        #expect(room.handle(.raiseHand, from: "eli", now: 11).listing == nil)
        guard case .joined(_, let joined, _) = room.join(id: "gus", name: "Gus", role: .audience, now: 12) else {
            Issue.record("not joined")
            return
        }
        #expect(joined.listing == nil)
        let listed = room.handle(.setListed(true), from: "ana", now: 13)
        guard case .added(let entry, .listed)? = listed.listing else {
            Issue.record("not added: \(String(describing: listed.listing))")
            return
        }
        #expect(entry.listeners == 3 && entry.raisedHands == 1 && entry.startedAt == 1)
    }

    @Test func onlyWhoMayEndTheRoomMayListIt() {
        expectRefused(.setListed(false), by: "bo", code: .forbidden, message: "only hosts can list or unlist the room")
        expectRefused(.setListed(true), by: "ana", code: .conflict, message: "the room is already listed in the lobby")
    }

    @Test func aLinkIsGrantedForRolesNotAboveTheAsker() {
        var room = populatedRoom()
        let granted = room.handle(.createLink(role: .moderator, ttl: 3600), from: "bo", id: .integer(4), now: 10)
        #expect(granted.error == nil && granted.deliveries.isEmpty)
        #expect(
            granted.grants == [
                LinkGrant(peer: "bo", room: "lobby", role: .moderator, ttl: 3600, requestID: .integer(4))
            ])
        #expect(
            granted.changes == [
                .audit(AuditEntry(at: 10, actor: "bo", action: "create_link", detail: "moderator, 3600 s"))
            ])
        expectRefused(
            .createLink(role: .host, ttl: 3600), by: "bo", code: .forbidden,
            message: "a moderator cannot make links for a host")
        expectRefused(
            .createLink(role: .audience, ttl: 3600), by: "eli", code: .forbidden,
            message: "only hosts and moderators can make invite links")
        expectRefused(
            .createLink(role: .audience, ttl: 10), by: "ana", code: .forbidden,
            message: "a link lasts from one minute to 30 days")
        expectRefused(
            .createLink(role: "dj", ttl: 3600), by: "ana", code: .forbidden, message: "there is no role called dj")
    }

    /// Issue 27: the listing names the first five listeners, and when one of them leaves or goes on stage the next
    /// who came first takes the place; recorders and the stage are never named among them.
    @Test func theListingNamesTheFirstFiveListeners() {
        var room = RoomAuthority(name: "jazz", roles: defaultRoles)
        _ = room.join(id: "ana", name: "Ana", role: .host, now: 1)
        for (index, name) in ["Bo", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana"].enumerated() {
            _ = room.join(id: PeerID(name.lowercased()), name: name, role: .audience, now: Timestamp(2 + index))
        }
        #expect(room.listing?.audience == ["Bo", "Chen", "Dara", "Eli", "Fay"])
        #expect(room.listing?.listeners == 7)
        let left = room.leave("chen", reason: .left, now: 20)
        #expect(
            left.listing
                == .updated(
                    listing(
                        room, stage: [("Ana", .host)], listeners: 6, audience: ["Bo", "Dara", "Eli", "Fay", "Gus"])))
        _ = room.handle(.setRole("bo", .speaker), from: "ana", now: 21)
        #expect(room.listing?.audience == ["Dara", "Eli", "Fay", "Gus", "Hana"])
        #expect(room.listing?.stage.map(\.name) == ["Ana", "Bo"])
    }
}

/// The media address a client is told, for every kind of binding and client (`MediaAddressPolicy`).
@Suite struct MediaAddressPolicyTests {
    typealias Facts = MediaAddressPolicy.Facts

    @Test func aPublicAddressWins() {
        let facts = Facts(remote: "198.51.100.4:5000", local: "10.0.0.2:7480")
        #expect(
            MediaAddressPolicy.host(publicAddress: "203.0.113.9", bindHost: "0.0.0.0", facts: facts) == "203.0.113.9")
    }

    @Test func loopbackIsAnnouncedOnlyToClientsOnThisMachine() {
        let local = Facts(remote: "127.0.0.1:5000", local: "127.0.0.1:7480")
        let proxiedLocal = Facts(remote: "127.0.0.1:5000", local: "127.0.0.1:7480", forwardedFor: "127.0.0.1")
        let proxiedRemote = Facts(remote: "127.0.0.1:5000", local: "127.0.0.1:7480", forwardedFor: "198.51.100.4")
        #expect(MediaAddressPolicy.host(publicAddress: nil, bindHost: "127.0.0.1", facts: local) == "127.0.0.1")
        #expect(MediaAddressPolicy.host(publicAddress: nil, bindHost: "127.0.0.1", facts: proxiedLocal) == "127.0.0.1")
        #expect(MediaAddressPolicy.host(publicAddress: nil, bindHost: "127.0.0.1", facts: proxiedRemote) == nil)
        #expect(MediaAddressPolicy.host(publicAddress: nil, bindHost: "0.0.0.0", facts: proxiedRemote) == nil)
        #expect(
            MediaAddressPolicy.host(
                publicAddress: nil, bindHost: "0.0.0.0",
                facts: Facts(remote: "[::1]:5000", local: "[::1]:7480")) == "127.0.0.1")
    }

    @Test func everyAddressAnnouncesTheOneTheClientReached() {
        let remote = Facts(remote: "198.51.100.4:5000", local: "10.0.0.2:7480")
        #expect(MediaAddressPolicy.host(publicAddress: nil, bindHost: "0.0.0.0", facts: remote) == "10.0.0.2")
        #expect(MediaAddressPolicy.host(publicAddress: nil, bindHost: "10.0.0.7", facts: remote) == "10.0.0.7")
        // Through a proxy on this machine, the address the client asked for, when it is an address.
        let viaProxy = Facts(
            remote: "127.0.0.1:5000", local: "127.0.0.1:7480", forwardedFor: "198.51.100.4",
            requestedHost: "192.0.2.10")
        #expect(MediaAddressPolicy.host(publicAddress: nil, bindHost: "0.0.0.0", facts: viaProxy) == "192.0.2.10")
        let viaProxyByName = Facts(
            remote: "127.0.0.1:5000", local: "127.0.0.1:7480", forwardedFor: "198.51.100.4",
            requestedHost: "rooms.example.org")
        #expect(MediaAddressPolicy.host(publicAddress: nil, bindHost: "0.0.0.0", facts: viaProxyByName) == nil)
    }

    @Test func addressesAreReadStrictly() {
        #expect(MediaAddressPolicy.isIPv4("192.0.2.1"))
        for text in ["192.0.2", "192.0.2.256", "01.2.3.4", "a.b.c.d", "", "1.2.3.4.5"] {
            #expect(!MediaAddressPolicy.isIPv4(text), "\(text)")
        }
        for text in ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1", "localhost"] {
            #expect(MediaAddressPolicy.isLoopback(text), "\(text)")
        }
        for text in ["128.0.0.1", "10.0.0.1", "::2"] { #expect(!MediaAddressPolicy.isLoopback(text), "\(text)") }
        #expect(hostPart("[::1]:7480") == "::1" && hostPart("example.org:443") == "example.org")
        #expect(hostPart("127.0.0.1:5000") == "127.0.0.1" && hostPart("::1") == "::1" && hostPart("host") == "host")
    }

}
