import Testing

@testable import RoomCore

@Suite struct ListingModelTests {
    func listing(_ room: String, listeners: Int, onStage: Int = 1, startedAt: Timestamp = 0) -> RoomListing {
        RoomListing(
            room: room, topic: "", stage: Array(repeating: .init(name: "S", role: .speaker), count: onStage),
            onStage: onStage, listeners: listeners, raisedHands: 0, startedAt: startedAt)
    }

    @Test func theLobbyOrderIsMostListenersFirstAndStable() {
        let rooms = [
            listing("b", listeners: 5), listing("a", listeners: 5), listing("c", listeners: 90),
            listing("d", listeners: 5, onStage: 3), listing("e", listeners: 5, startedAt: -10),
        ]
        #expect(rooms.sorted(by: RoomListing.lobbyOrder).map(\.room) == ["c", "d", "e", "a", "b"])
    }

    @Test func aChangeIsWhatWatchersSeeDiffer() {
        let before = listing("a", listeners: 1)
        let after = listing("a", listeners: 2)
        #expect(ListingChange.between(nil, nil, room: "a", arrival: .started, departure: .ended) == nil)
        #expect(
            ListingChange.between(nil, after, room: "a", arrival: .listed, departure: .ended) == .added(after, .listed))
        #expect(
            ListingChange.between(before, nil, room: "a", arrival: .started, departure: .empty)
                == .removed(room: "a", .empty))
        #expect(
            ListingChange.between(before, after, room: "a", arrival: .started, departure: .ended) == .updated(after))
        #expect(ListingChange.between(before, before, room: "a", arrival: .started, departure: .ended) == nil)
    }

    @Test func aListingTamesWhatItIsGiven() {
        let wild = RoomListing(
            room: "a", topic: "line\u{202E}one\ntwo",
            stage: (0..<12).map { .init(name: "N\u{7}\($0)", role: .speaker) },
            onStage: 3, listeners: -4, raisedHands: -1, startedAt: 5)
        #expect(wild.topic == "lineone two")
        #expect(wild.stage.count == RoomListing.maxStageNames && wild.stage[0].name == "N0")
        #expect(wild.onStage == 8 && wild.listeners == 0 && wild.raisedHands == 0)
    }

    @Test func linkListAndUnlistCommands() {
        #expect(parse("/list") == .success(.listed(true)))
        #expect(parse("/unlist") == .success(.listed(false)))
        #expect(parse("/link") == .success(.link(.audience, ttl: nil)))
        #expect(parse("/link speaker") == .success(.link(.speaker, ttl: nil)))
        #expect(parse("/link mod 12h") == .success(.link(.moderator, ttl: 12 * 3600)))
        #expect(parse("/link 30m listener") == .success(.link(.audience, ttl: 1800)))
        #expect(parse("/link 2d") == .success(.link(.audience, ttl: 2 * 86_400)))
        #expect(
            parse("/link dj")
                == .failure(.unknownRole("dj", known: ["host", "moderator", "speaker", "audience", "recorder"])))
        #expect(
            parse("/link speaker 1d now")
                == .failure(.unexpectedArgument(command: "link", text: "now", usage: "/link [ROLE] [TIME] [USES]")))
        #expect(
            parse("/unlist please")
                == .failure(.unexpectedArgument(command: "unlist", text: "please", usage: "/unlist")))
        #expect(
            Command.parseLifetime("90s") == 90 && Command.parseLifetime("7") == nil && Command.parseLifetime("d") == nil
        )
    }

    @Test func linksAndRevokeCommands() {
        #expect(parse("/links") == .success(.links))
        #expect(parse("/lock") == .success(.locked(true)))
        #expect(parse("/unlock") == .success(.locked(false)))
        #expect(parse("/revoke w_Lk0L9Zv5U") == .success(.revoke("w_Lk0L9Zv5U")))
        #expect(parse("/revoke ALL") == .success(.revoke(ClientRequest.allLinks)))
        #expect(
            parse("/revoke") == .failure(.missingArgument(command: "revoke", argument: "ID", usage: "/revoke ID|all")))
        var state = RoomState(roles: roles)
        #expect(reduce(&state, .command(.links)).isEmpty == false)
        let host = Peer(id: "ana", name: "Ana", role: .host)
        let moderator = Peer(id: "bo", name: "Bo", role: .moderator)
        #expect(roles.check(.listLinks, by: host, target: nil) == nil)
        #expect(roles.check(.setLocked(true), by: host, target: nil) == nil)
        #expect(
            roles.check(.setLocked(true), by: moderator, target: nil)
                == Refusal("only hosts can lock or unlock the room"))
        #expect(roles.check(.revokeLink("all"), by: host, target: nil) == nil)
        #expect(roles.check(.listLinks, by: moderator, target: nil) == Refusal("only hosts can see the room's links"))
        #expect(
            roles.check(.revokeLink("x"), by: moderator, target: nil)
                == Refusal("only hosts can withdraw the room's links"))
    }

    @Test func whoMayListAndMakeLinks() {
        let host = Peer(id: "ana", name: "Ana", role: .host)
        let moderator = Peer(id: "bo", name: "Bo", role: .moderator)
        let listener = Peer(id: "eli", name: "Eli", role: .audience)
        #expect(roles.check(.setListed(false), by: host, target: nil) == nil)
        #expect(
            roles.check(.setListed(false), by: moderator, target: nil)
                == Refusal("only hosts can list or unlist the room"))
        #expect(roles.check(.createLink(role: .moderator, ttl: 60), by: moderator, target: nil) == nil)
        #expect(
            roles.check(.createLink(role: .host, ttl: 60), by: moderator, target: nil)
                == Refusal("a moderator cannot make links for a host"))
        #expect(
            roles.check(.createLink(role: .audience, ttl: 60), by: listener, target: nil)
                == Refusal("only hosts and moderators can make invite links"))
        #expect(
            roles.check(.createLink(role: .audience, ttl: 31 * 86_400), by: host, target: nil)
                == Refusal("a link lasts from one minute to 30 days"))
    }
}
