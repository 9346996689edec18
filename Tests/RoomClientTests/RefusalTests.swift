import RoomClient
import Testing

/// Each refusal at the door, in words about what the person holds.
@Suite struct RefusalTests {
    @Test func invitesAreSpokenOfAsLinks() {
        let cases: [(UInt16, String)] = [
            (
                4001,
                "The invite in this link cannot be read; it may have been cut short when it was copied. Copy the whole link again."
            ),
            (4003, "This link was not signed by this server (or it was changed). Ask the host for a new one."),
            (4004, "This link has expired. Ask the host for a new one."),
            (4006, "This link is for another room. Check the room's address, or ask for a link for it."),
            (4009, "The room this link is for has ended."),
            (
                4013,
                "This link was made for another Clubroom server, not this one. Check the address, or ask for a link to this server."
            ),
            (
                4014,
                "This server's lobby has no live room by that name: it may have ended, or its host keeps it unlisted (ask them for a room link)."
            ),
            (4016, "This link opens one room, not the lobby: join the room's address, or ask for a server link."),
            (4017, "The lobby is full right now. Try again in a minute."),
        ]
        for (code, words) in cases {
            #expect(Refusals.describe(code: code, reason: "server text", withInvite: true) == words, "\(code)")
        }
    }

    @Test func tokensAreSpokenOfAsTokens() {
        #expect(
            Refusals.describe(code: 4004, reason: "", withInvite: false)
                == "This token has expired. Ask the host for a new one.")
        #expect(
            Refusals.describe(code: 4009, reason: "", withInvite: false)
                == "The room has ended. Ask the host when it opens again.")
        #expect(
            Refusals.describe(code: 4000, reason: "", withInvite: false)
                == "The server got no token. Give the host's token with --token, --token-file or CLUBROOM_TOKEN.")
        #expect(
            Refusals.describe(code: 4008, reason: "", withInvite: false)
                == "This token names you with control characters, which no one could read safely. Ask the host for a "
                + "new one.")
        #expect(
            Refusals.describe(code: 4099, reason: "odd", withInvite: false)
                == "The server refused to let you in (4099: odd).")
    }
}
