import Testing

@testable import RoomCore

/// Who may `/ban`: hosts only (a ban reaches every room of the server), and only someone below them, never
/// themselves; a moderator may still remove.
@Suite struct BanRuleTests {
    @Test func onlyHostsBanAndOnlyThoseBelowThem() {
        let host = Peer(id: "ana", name: "Ana", role: .host)
        let otherHost = Peer(id: "hu", name: "Hu", role: .host)
        let moderator = Peer(id: "mo", name: "Mo", role: .moderator)
        let speaker = Peer(id: "cy", name: "Cy", role: .speaker)
        let listener = Peer(id: "bo", name: "Bo", role: .audience)
        let ban = ClientRequest.remove("bo", reason: "spam", ban: true)
        #expect(roles.check(ban, by: host, target: listener) == nil)
        #expect(roles.check(ban, by: host, target: moderator) == nil)
        #expect(
            roles.check(ban, by: moderator, target: listener)
                == Refusal("only hosts can ban someone from the server's rooms"))
        #expect(roles.check(.remove("bo", reason: nil), by: moderator, target: listener) == nil)
        #expect(
            roles.check(ban, by: speaker, target: listener) == Refusal("only hosts and moderators can remove people"))
        #expect(
            roles.check(ban, by: host, target: otherHost) == Refusal("you cannot ban Hu: a host is not below a host"))
        #expect(roles.check(ban, by: host, target: host) == Refusal("you cannot ban yourself"))
        #expect(roles.check(.listBans, by: host, target: nil) == nil)
        #expect(roles.check(.unban("bo"), by: host, target: nil) == nil)
        #expect(
            roles.check(.listBans, by: moderator, target: nil)
                == Refusal("only hosts can see or lift the server's bans"))
        #expect(
            roles.check(.unban("bo"), by: moderator, target: nil)
                == Refusal("only hosts can see or lift the server's bans"))
    }

    @Test func theBanCommandIsSentByAHostAndRefusedToAModerator() {
        let ban = Command.remove("eli", reason: "spam", ban: true)
        #expect(effects(of: .command(ban), as: "ana") == [.send(.remove("eli", reason: "spam", ban: true))])
        #expect(effects(of: .command(ban), as: "bo") == refused("only hosts can ban someone from the server's rooms"))
        #expect(parse("/bans") == .success(.bans))
        #expect(parse("/unban Bo") == .success(.unban("Bo")))
        #expect(
            parse("/unban")
                == .failure(
                    .missingArgument(command: "unban", argument: "NAME|IDENTITY", usage: "/unban NAME|IDENTITY")))
        #expect(effects(of: .command(.bans), as: "ana") == [.send(.listBans)])
        #expect(effects(of: .command(.unban("Bo")), as: "ana") == [.send(.unban("Bo"))])
    }
}
