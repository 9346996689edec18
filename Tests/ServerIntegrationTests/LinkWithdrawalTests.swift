import ClubroomResources
import Foundation
import RoomClient
import RoomCore
import RoomProtocol
import RoomTesting
import Testing

/// The invite a session's `create_link` with request id `id` was answered with.
private func madeLink(_ seen: SessionRecorder, id: Int64) -> String? {
    let answer = seen.wait {
        if case .message(let message) = $0, case .inviteLink(_, _, _, _, .integer(id)) = message.event { return true }
        return false
    }
    guard case .message(let message)? = answer, case .inviteLink(_, _, let token, _, _) = message.event else {
        return nil
    }
    return token
}

/// Links that can be withdrawn, removals that hold, and limits at the door (issue 31, findings 2, 4 and 5).
@Suite(.ownThread, .serialized) struct LinkWithdrawalTests {
    /// A moderator's 30-day moderator link stops admitting anyone once the moderator is lowered, and stays
    /// withdrawn after they are removed; a host's own link is untouched, and `/revoke all`'s registry call
    /// withdraws it without a new secret.
    @Test(.timeLimit(.minutes(2))) func aDemotedRemovedModeratorsLinkAdmitsNoOne() throws {
        try withServer { server, bots in
            let (host, hostSeen) = try joinedSession(server, "ana", role: "host")
            defer { host.shutdown() }
            let (moderator, moderatorSeen) = try joinedSession(server, "mo", role: "moderator")
            defer { moderator.shutdown() }
            moderator.send(.createLink(role: .moderator, ttl: 30 * 86_400), id: .integer(1))
            let moderatorLink = try #require(madeLink(moderatorSeen, id: 1))
            host.send(.createLink(role: .audience, ttl: 600), id: .integer(2))
            let hostLink = try #require(madeLink(hostSeen, id: 2))
            // While the moderator is a moderator, the link works.
            let (first, firstSeen) = try session(
                server, room: "lobby", token: moderatorLink, headers: guestHeaders(name: "First"))
            first.shutdown()
            #expect(snapshot(firstSeen) != nil, "\(firstSeen.all)")

            host.send(.setRole(PeerID("mo"), .audience), id: .integer(3))
            #expect(
                hostSeen.wait {
                    if case .message(let message) = $0, case .roleChanged(PeerID("mo"), .audience, _, _) = message.event
                    {
                        return true
                    }
                    return false
                } != nil)
            let (afterDemotion, afterDemotionSeen) = try session(
                server, room: "lobby", token: moderatorLink, headers: guestHeaders(name: "Mallory"))
            afterDemotion.shutdown()
            #expect(refusal(afterDemotionSeen) == 4018, "\(afterDemotionSeen.all)")

            host.send(.remove(PeerID("mo"), reason: nil), id: .integer(4))
            #expect(moderatorSeen.wait { $0 == .ended(.removed) } != nil)
            let (afterRemoval, afterRemovalSeen) = try session(
                server, room: "lobby", token: moderatorLink, headers: guestHeaders(name: "Mallory"))
            afterRemoval.shutdown()
            #expect(refusal(afterRemovalSeen) == 4018)
            #expect(
                afterRemovalSeen.all.contains(
                    .ended(
                        .refused(
                            code: 4018,
                            reason: "This invite was withdrawn by the room's host or the server's operator."))))
            #expect(
                Refusals.describe(code: 4018, reason: "", withInvite: true)
                    == "This link was withdrawn. Ask the host for a new one.")

            // The host's own link still works, until the operator withdraws every link of the room.
            let (guest, guestSeen) = try session(
                server, room: "lobby", token: hostLink, headers: guestHeaders(name: "Hana"))
            guest.shutdown()
            #expect(snapshot(guestSeen) != nil)
            let withdrawn = try ChildProcess(
                executable: server.binary,
                arguments: ["links", "revoke", "all", "--room", "lobby", "--data", server.dataDirectory]
            ).finish()
            #expect(withdrawn.status == 0)
            let (late, lateSeen) = try session(
                server, room: "lobby", token: hostLink, headers: guestHeaders(name: "Ivo"))
            late.shutdown()
            #expect(refusal(lateSeen) == 4018)
            // A link made afterwards works: the secret did not change.
            host.send(.createLink(role: .audience, ttl: 600), id: .integer(5))
            let newLink = try #require(madeLink(hostSeen, id: 5))
            let (fresh, freshSeen) = try session(
                server, room: "lobby", token: newLink, headers: guestHeaders(name: "Jun"))
            fresh.shutdown()
            #expect(snapshot(freshSeen) != nil, "\(freshSeen.all)")
            // The operator sees every link and what became of it.
            let listed = try ChildProcess(
                executable: server.binary, arguments: ["links", "--data", server.dataDirectory]
            ).finish()
            #expect(listed.status == 0)
            let lines = listed.standardOutput.split(separator: "\n")
            #expect(lines.first?.hasPrefix("ID ") == true)
            #expect(lines.count == 4)
            #expect(
                lines.contains { $0.contains(" moderator ") && $0.contains(" mo ") && $0.hasSuffix("withdrawn by ana") }
            )
            _ = bots
        }
    }

    /// A host lists the room's links and withdraws one, then all, from the room; a moderator may do neither.
    @Test(.timeLimit(.minutes(2))) func aHostListsAndWithdrawsTheRoomsLinks() throws {
        try withServer { server, bots in
            let (host, hostSeen) = try joinedSession(server, "ana", role: "host")
            defer { host.shutdown() }
            host.send(.createLink(role: .speaker, ttl: 3600), id: .integer(1))
            let speakerLink = try #require(madeLink(hostSeen, id: 1))
            host.send(.createLink(role: .audience, ttl: 3600), id: .integer(2))
            let audienceLink = try #require(madeLink(hostSeen, id: 2))
            func answer(_ id: Int64) -> (links: [RoomLink], withdrawn: [String])? {
                let found = hostSeen.wait {
                    if case .message(let message) = $0, case .links(_, _, _, _, .integer(id)) = message.event {
                        return true
                    }
                    return false
                }
                guard case .message(let message)? = found,
                    case .links(let room, let links, let withdrawn, _, _) = message.event,
                    room == "lobby"
                else { return nil }
                return (links, withdrawn)
            }
            host.send(.listLinks, id: .integer(3))
            let listed = try #require(answer(3))
            #expect(listed.withdrawn.isEmpty)
            #expect(Set(listed.links.map(\.role.rawValue)) == ["audience", "speaker"] && listed.links.count == 2)
            #expect(listed.links.allSatisfy { $0.by == PeerID("ana") && !$0.withdrawn && $0.uses == 0 })
            let speakerID = try #require(listed.links.first { $0.role == .speaker }?.id)

            host.send(.revokeLink(speakerID), id: .integer(4))
            #expect(answer(4)?.withdrawn == [speakerID])
            let (refused, refusedSeen) = try session(
                server, room: "lobby", token: speakerLink, headers: guestHeaders(name: "Eve"))
            refused.shutdown()
            #expect(refusal(refusedSeen) == 4018)
            let (guest, guestSeen) = try session(
                server, room: "lobby", token: audienceLink, headers: guestHeaders(name: "Hana"))
            defer { guest.shutdown() }
            #expect(snapshot(guestSeen) != nil)

            let (moderator, moderatorSeen) = try joinedSession(server, "mo", role: "moderator")
            defer { moderator.shutdown() }
            moderator.send(.revokeLink(ClientRequest.allLinks), id: .integer(1))
            #expect(
                moderatorSeen.wait {
                    if case .message(let message) = $0, case .error(.forbidden, _, .integer(1)) = message.event {
                        return true
                    }
                    return false
                } != nil)

            host.send(.revokeLink(ClientRequest.allLinks), id: .integer(5))
            let all = try #require(answer(5))
            #expect(all.withdrawn.count == 1)
            #expect(all.links.allSatisfy { $0.withdrawn })
            let (late, lateSeen) = try session(
                server, room: "lobby", token: audienceLink, headers: guestHeaders(name: "Ivo"))
            late.shutdown()
            #expect(refusal(lateSeen) == 4018)
            // Who was in stays in.
            #expect(guest.isConnected)
            _ = bots
        }
    }

    /// A locked room holds newcomers with a link, a fresh key included, at the door: they are told they wait and
    /// see nothing of the room; its hosts hear of each, and one turned away (`deny`) is closed with 4023, one let
    /// in (`admit`) joins; whoever came in before gets back in without waiting; unlocked, newcomers come in again.
    @Test(.timeLimit(.minutes(2))) func aLockedRoomHoldsNewIdentitiesForAHostsAnswer() throws {
        try withServer { server, bots in
            let (host, hostSeen) = try joinedSession(server, "ana", role: "host")
            defer { host.shutdown() }
            let link = try server.invite(room: "lobby")
            let hanaKey = (0..<32).map { UInt8($0 + 7) }
            let (hana, hanaSeen) = try session(
                server, room: "lobby", token: link, headers: guestHeaders(name: "Hana", key: hanaKey))
            hana.shutdown()
            #expect(snapshot(hanaSeen) != nil)
            host.send(.setLocked(true), id: .integer(1))
            #expect(
                hostSeen.wait {
                    if case .message(let message) = $0, case .links(_, _, _, true, .integer(1)) = message.event {
                        return true
                    }
                    return false
                } != nil, "\(hostSeen.all)")

            // Eve waits; the host hears of it and turns her away.
            let (eve, eveSeen) = try waitingSession(server, token: link, name: "Eve")
            defer { eve.shutdown() }
            guard let eveKnock = knock(hostSeen, name: "Eve", state: .waiting) else {
                Issue.record("the host did not hear of Eve: \(hostSeen.all)")
                return
            }
            #expect(snapshot(eveSeen) == nil)
            #expect(
                !eveSeen.all.contains {
                    if case .message(let message) = $0, case .waiting = message.event { return false }
                    if case .message = $0 { return true }
                    return false
                }, "the waiting newcomer saw something of the room: \(eveSeen.all)")
            host.send(.denyWaiting("Eve"), id: .integer(2))
            _ = eveSeen.wait { if case .ended = $0 { true } else { false } }
            #expect(refusal(eveSeen) == 4023)
            #expect(
                Refusals.describe(code: 4023, reason: "", withInvite: true) == "A host of this room did not let you in."
            )
            #expect(knock(hostSeen, name: "Eve", state: .denied)?.by == "ana")

            // Fay waits and is let in by her identity.
            let (fay, faySeen) = try waitingSession(server, token: link, name: "Fay")
            defer { fay.shutdown() }
            guard let fayKnock = knock(hostSeen, name: "Fay", state: .waiting) else {
                Issue.record("the host did not hear of Fay: \(hostSeen.all)")
                return
            }
            #expect(fayKnock.peer != eveKnock.peer)
            host.send(.admitWaiting(fayKnock.peer.rawValue), id: .integer(3))
            _ = faySeen.wait {
                if case .message(let message) = $0, case .joined = message.event { return true }
                return false
            }
            #expect(snapshot(faySeen)?.selfID == fayKnock.peer)
            #expect(knock(hostSeen, name: "Fay", state: .admitted)?.by == "ana")

            // Nobody by that name waits: the host is told so.
            host.send(.admitWaiting("Gus"), id: .integer(4))
            #expect(
                hostSeen.wait {
                    if case .message(let message) = $0, case .error(.notFound, _, .integer(4)) = message.event {
                        return true
                    }
                    return false
                } != nil)

            // Whoever came in before comes back at once.
            let (back, backSeen) = try session(
                server, room: "lobby", token: link, headers: guestHeaders(name: "Hana", key: hanaKey))
            back.shutdown()
            #expect(snapshot(backSeen) != nil)
            host.send(.setLocked(false), id: .integer(5))
            #expect(
                hostSeen.wait {
                    if case .message(let message) = $0, case .links(_, _, _, false, .integer(5)) = message.event {
                        return true
                    }
                    return false
                } != nil)
            let (later, laterSeen) = try session(
                server, room: "lobby", token: link, headers: guestHeaders(name: "Eve"))
            later.shutdown()
            #expect(snapshot(laterSeen) != nil)
            _ = bots
        }
    }

    /// A session with a fresh key that waits at the locked room's door (it was told `waiting`).
    private func waitingSession(
        _ server: ServerProcess, token: String, name: String
    ) throws -> (
        RoomSession, SessionRecorder
    ) {
        let recorder = SessionRecorder()
        let session = try RoomSession(
            url: server.url(room: "lobby"), token: token, headers: guestHeaders(name: name),
            reconnect: ReconnectPolicy(maximumAttempts: 0)
        ) { recorder.record($0) }
        session.start()
        let told = recorder.wait {
            if case .message(let message) = $0, case .waiting(room: "lobby") = message.event { return true }
            return false
        }
        #expect(told != nil, "\(name) was not told to wait: \(recorder.all)")
        return (session, recorder)
    }

    /// The knock the host heard about `name` in `state`.
    private func knock(_ seen: SessionRecorder, name: String, state: Knock.State) -> Knock? {
        let event = seen.wait {
            if case .message(let message) = $0, case .knock(_, let knock) = message.event {
                return knock.name == name && knock.state == state
            }
            return false
        }
        guard case .message(let message)? = event, case .knock(_, let knock) = message.event else { return nil }
        return knock
    }

    /// A link a host makes from the room with a use limit (`/link ROLE TIME USES`) lets in that many identities
    /// and refuses the next with 4019; the one it let in still comes back.
    @Test(.timeLimit(.minutes(2))) func aRoomLinkHasTheUseLimitItsMakerGave() throws {
        try withServer { server, bots in
            let (host, hostSeen) = try joinedSession(server, "ana", role: "host")
            defer { host.shutdown() }
            guard
                case .success(.link(let role, let ttl, let uses)) = Command.parse(
                    "/link listener 1h 1", peers: [], roles: try RoleTable.load(contentsOf: ClubroomResources.rolesURL))
            else {
                Issue.record("/link listener 1h 1 did not parse")
                return
            }
            #expect(uses == 1)
            host.send(.createLink(role: role, ttl: ttl ?? 0, maxUses: uses), id: .integer(1))
            guard let link = madeLink(hostSeen, id: 1) else {
                Issue.record("no link: \(hostSeen.all)")
                return
            }
            let hanaKey = (0..<32).map { UInt8($0 + 3) }
            let (hana, hanaSeen) = try session(
                server, room: "lobby", token: link, headers: guestHeaders(name: "Hana", key: hanaKey))
            hana.shutdown()
            #expect(snapshot(hanaSeen) != nil)
            let (eve, eveSeen) = try session(server, room: "lobby", token: link, headers: guestHeaders(name: "Eve"))
            eve.shutdown()
            #expect(refusal(eveSeen) == 4019)
            let (back, backSeen) = try session(
                server, room: "lobby", token: link, headers: guestHeaders(name: "Hana", key: hanaKey))
            back.shutdown()
            #expect(snapshot(backSeen) != nil)
            host.send(.createLink(role: .audience, ttl: 3600, maxUses: 0), id: .integer(2))
            #expect(
                hostSeen.wait {
                    if case .message(let message) = $0, case .error(.forbidden, _, .integer(2)) = message.event {
                        return true
                    }
                    return false
                } != nil, "\(hostSeen.all)")
            _ = bots
        }
    }

    /// `/remove NAME --link` withdraws the room's link that let the person in, so a fresh guest key does not
    /// bring them back through it; the host is answered with the ids withdrawn. A plain removal leaves the link.
    @Test(.timeLimit(.minutes(2))) func aRemovalWithItsLinkKeepsAFreshKeyOut() throws {
        try withServer { server, bots in
            let (host, hostSeen) = try joinedSession(server, "ana", role: "host")
            defer { host.shutdown() }
            let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
            let link = try server.invite(room: "lobby")
            let (eli, eliSeen) = try session(server, room: "lobby", token: link, headers: guestHeaders(name: "Eli"))
            defer { eli.shutdown() }
            guard let eliID = snapshot(eliSeen)?.selfID else {
                Issue.record("Eli did not join: \(eliSeen.all)")
                return
            }
            host.send(.remove(eliID, reason: nil), id: .integer(1))
            _ = eliSeen.wait { if case .ended = $0 { true } else { false } }
            let (again, againSeen) = try session(
                server, room: "lobby", token: link, headers: guestHeaders(name: "Eli2"))
            again.shutdown()
            #expect(snapshot(againSeen) != nil, "a plain removal withdrew the link: \(againSeen.all)")

            let (hana, hanaSeen) = try session(server, room: "lobby", token: link, headers: guestHeaders(name: "Hana"))
            defer { hana.shutdown() }
            guard let hanaID = snapshot(hanaSeen)?.selfID else {
                Issue.record("Hana did not join: \(hanaSeen.all)")
                return
            }
            guard
                case .success(let command) = Command.parse(
                    "/remove Hana --link spam", peers: [Peer(id: hanaID, name: "Hana", role: .audience)], roles: roles),
                case .remove(hanaID, let reason, let withdrawLink, _) = command
            else {
                Issue.record("/remove --link did not parse")
                return
            }
            #expect(reason == "spam")
            #expect(withdrawLink)
            host.send(.remove(hanaID, reason: reason, withdrawLink: withdrawLink), id: .integer(2))
            let answer = hostSeen.wait {
                if case .message(let message) = $0, case .links(_, _, _, _, .integer(2)) = message.event { return true }
                return false
            }
            guard case .message(let message)? = answer, case .links(_, _, let withdrawn, _, _) = message.event else {
                Issue.record("no answer naming the links withdrawn: \(hostSeen.all)")
                return
            }
            #expect(withdrawn.count == 1)
            let (back, backSeen) = try session(server, room: "lobby", token: link, headers: guestHeaders(name: "Hana2"))
            back.shutdown()
            #expect(refusal(backSeen) == 4018)
            _ = bots
        }
    }

    /// Someone removed stays out with the same key across a restart of the server; a link admits no more
    /// identities than its `--max-uses`, so a fresh key does not bring a removed person back through it.
    @Test(.timeLimit(.minutes(2))) func aRemovalHoldsAcrossARestartAndALinkHasALimitedNumberOfUses() throws {
        var server = try ServerProcess()
        defer { server.stopAndClean() }
        let link = try server.invite(room: "lobby")
        let (host, hostSeen) = try joinedSession(server, "ana", role: "host")
        let eveKey = (0..<32).map { UInt8($0 + 100) }
        let (eve, eveSeen) = try session(
            server, room: "lobby", token: link, headers: guestHeaders(name: "Eve", key: eveKey))
        let eveID = try #require(snapshot(eveSeen)?.selfID)
        host.send(.remove(eveID, reason: "spam"), id: .integer(1))
        #expect(eveSeen.wait { $0 == .ended(.removed) } != nil)
        eve.shutdown()
        _ = hostSeen
        host.shutdown()

        server.stop()
        server = try ServerProcess(directory: server.directory)
        let (again, againSeen) = try session(
            server, room: "lobby", token: link, headers: guestHeaders(name: "Eve", key: eveKey))
        again.shutdown()
        #expect(refusal(againSeen) == 4012, "\(againSeen.all)")

        // A link made with --max-uses 2: a first and a second identity come in; a third (a removed person's
        // fresh key, say) is one too many.
        let made = try ChildProcess(
            executable: server.binary,
            arguments: [
                "invite", "ws://127.0.0.1:\(server.port)", "--room", "lobby", "--max-uses", "2", "--secret-file",
                server.secretFile,
            ]
        ).finish()
        #expect(made.status == 0)
        let limited = String(try #require(made.standardOutput.split(separator: "=").last)).trimmingCharacters(
            in: .whitespacesAndNewlines)
        for name in ["Bo", "Cy"] {
            let (guest, guestSeen) = try session(
                server, room: "lobby", token: limited, headers: guestHeaders(name: name))
            guest.shutdown()
            #expect(snapshot(guestSeen) != nil)
        }
        let (third, thirdSeen) = try session(
            server, room: "lobby", token: limited, headers: guestHeaders(name: "Eve2"))
        third.shutdown()
        #expect(refusal(thirdSeen) == 4019)
    }

    /// 300 identities from one address with one link: the first 20 (the burst) come in, and the address is then
    /// refused with a sentence that says why, while the room stays open to others. (`--invite-rate 0`: the
    /// bucket does not refill during the test, so the count does not depend on how fast the machine is.)
    @Test(.timeLimit(.minutes(3))) func threeHundredIdentitiesFromOneAddressAreRefusedPastTheLimit() throws {
        let server = try ServerProcess(extraArguments: ["--invite-rate", "0"])
        defer { server.stopAndClean() }
        do {
            let link = try server.invite(room: "lobby")
            var admitted = 0
            var refusals: [UInt16] = []
            var firstRefusal: Int?
            for index in 0..<300 {
                let (guest, seen) = try session(
                    server, room: "lobby", token: link, headers: guestHeaders(name: "Sybil \(index)"))
                guest.shutdown()
                if snapshot(seen) != nil {
                    admitted += 1
                } else if let code = refusal(seen) {
                    refusals.append(code)
                    if firstRefusal == nil { firstRefusal = index }
                }
            }
            #expect(firstRefusal == 20)
            #expect(admitted == 20)
            #expect(refusals.count == 280)
            #expect(Set(refusals) == [4020])
            #expect(
                Refusals.describe(code: 4020, reason: "", withInvite: true)
                    == "Too many people joined from this address or with this link just now. Try again in a minute.")
            // A room token is not an invite, and still gets in.
            let (host, hostSeen) = try joinedSession(server, "ana", role: "host")
            host.shutdown()
            #expect(snapshot(hostSeen) != nil)
            #expect(!server.logLines(containing: "too many invite joins from 127.0.0.1").isEmpty)
        }
    }

    /// One invite has at most `--link-live-max` identities in rooms at once: the next is refused until one leaves.
    @Test(.timeLimit(.minutes(2))) func aLinkHasACapOfLiveIdentities() throws {
        let server = try ServerProcess(extraArguments: ["--link-live-max", "2"])
        defer { server.stopAndClean() }
        let link = try server.invite(room: "lobby")
        let (first, firstSeen) = try session(server, room: "lobby", token: link, headers: guestHeaders(name: "A"))
        let (second, secondSeen) = try session(server, room: "lobby", token: link, headers: guestHeaders(name: "B"))
        defer { second.shutdown() }
        #expect(snapshot(firstSeen) != nil && snapshot(secondSeen) != nil)
        let (third, thirdSeen) = try session(server, room: "lobby", token: link, headers: guestHeaders(name: "C"))
        third.shutdown()
        #expect(refusal(thirdSeen) == 4021)
        first.shutdown()
        #expect(firstSeen.wait { if case .ended = $0 { true } else { false } } != nil)
        var admitted = false
        for _ in 0..<50 where !admitted {
            let (again, againSeen) = try session(server, room: "lobby", token: link, headers: guestHeaders(name: "C"))
            again.shutdown()
            admitted = snapshot(againSeen) != nil
            if !admitted { usleep(100_000) }
        }
        #expect(admitted)
    }

    /// `X-Forwarded-For` names the source only when it comes from a proxy the server was told to trust; from
    /// anyone else it changes nothing, so it cannot be used to get past the limit per address.
    @Test(.timeLimit(.minutes(2))) func forwardedAddressesCountOnlyBehindATrustedProxy() throws {
        for trusted in [false, true] {
            let server = try ServerProcess(
                extraArguments: ["--invite-burst", "1", "--invite-rate", "0"]
                    + (trusted ? ["--trusted-proxy", "127.0.0.1"] : []))
            defer { server.stopAndClean() }
            let link = try server.invite(room: "lobby")
            var codes: [UInt16?] = []
            for (index, forwarded) in ["10.0.0.1", "10.0.0.2", "10.0.0.1"].enumerated() {
                var headers = guestHeaders(name: "G\(index)")
                headers.add("X-Forwarded-For", "192.0.2.9, " + forwarded)
                let (guest, seen) = try session(server, room: "lobby", token: link, headers: headers)
                guest.shutdown()
                codes.append(snapshot(seen) != nil ? nil : refusal(seen))
            }
            // Trusted: two addresses, the first one's second join is past its burst. Not trusted: one address.
            #expect(codes == (trusted ? [nil, nil, 4020] : [nil, 4020, 4020]), "trusted: \(trusted)")
        }
    }
}
