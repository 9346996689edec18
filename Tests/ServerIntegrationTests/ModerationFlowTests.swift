import Foundation
import RoomProtocol
import RoomTesting
import Testing

/// Real `clubroom serve` and `clubroom bot` processes over loopback, through every moderation flow.
@Suite(.ownThread, .serialized) struct ModerationFlowTests {
    @Test func raiseLowerInviteAcceptAndDecline() throws {
        try withServer { server, bots in
            let ana = try server.joinedBot("ana", role: "host")
            let eli = try server.joinedBot("eli", role: "audience", autoAccept: true)
            let fay = try server.joinedBot("fay", role: "audience")
            bots += [ana, eli, fay]
            try ana.expect("peer_joined") { $0.string("peer") == "eli" && $0.string("role") == "audience" }

            eli.send(#"{"cmd":"raise_hand"}"#)
            try ana.expect("hand_raised") { $0.string("peer") == "eli" }
            eli.send(#"{"cmd":"lower_hand"}"#)
            try ana.expect("hand_lowered") { $0.string("peer") == "eli" && $0.string("by") == "eli" }
            eli.send(#"{"cmd":"raise_hand"}"#)
            try ana.expect("hand_raised") { $0.string("peer") == "eli" }

            ana.send(#"{"cmd":"invite","peer":"eli"}"#)
            try eli.expect("invited") { $0.string("peer") == "eli" && $0.string("by") == "ana" }
            // The inviter sees the invitation pending at once, as every moderator does.
            try ana.expect("invited") { $0.string("peer") == "eli" && $0.string("by") == "ana" }
            try ana.expect("role_changed") {
                $0.string("peer") == "eli" && $0.string("role") == "speaker" && $0.string("by") == "eli"
            }
            try ana.expect("hand_lowered") { $0.string("peer") == "eli" }
            try fay.expect("role_changed") { $0.string("peer") == "eli" && $0.string("role") == "speaker" }

            ana.send(#"{"cmd":"invite","peer":"fay"}"#)
            try fay.expect("invited") { $0.string("peer") == "fay" }
            fay.send(#"{"cmd":"decline_invite"}"#)
            try ana.expect("invite_declined") { $0.string("peer") == "fay" }
            try eli.expect("invite_declined") { $0.string("peer") == "fay" }

            // An invitation can be taken back: everyone hears of it, and it can no longer be accepted.
            ana.send(#"{"cmd":"invite","peer":"fay"}"#)
            try fay.expect("invited") { $0.string("peer") == "fay" }
            ana.send(#"{"cmd":"withdraw_invite","peer":"fay"}"#)
            try fay.expect("invite_withdrawn") { $0.string("peer") == "fay" && $0.string("by") == "ana" }
            fay.send(#"{"cmd":"accept_invite","id":1}"#)
            try fay.expect("error") { $0.string("code") == "conflict" }

            #expect(try eli.finish() == 0)
            try ana.expect("peer_left") { $0.string("peer") == "eli" && $0.string("reason") == "left" }
        }
    }

    @Test func setRoleStepDownAndMute() throws {
        try withServer { server, bots in
            let ana = try server.joinedBot("ana", role: "host")
            let bo = try server.joinedBot("bo", role: "moderator")
            let eli = try server.joinedBot("eli", role: "audience")
            bots += [ana, bo, eli]

            bo.send(#"{"cmd":"set_role","peer":"eli","role":"speaker"}"#)
            try ana.expect("role_changed") {
                $0.string("peer") == "eli" && $0.string("role") == "speaker" && $0.string("by") == "bo"
            }
            try eli.expect("role_changed") { $0.string("peer") == "eli" }

            eli.send(#"{"cmd":"mute","on":false}"#)
            try ana.expect("mute_changed") {
                $0.string("peer") == "eli" && $0.bool("muted") == false && $0.string("by") == "eli"
            }
            bo.send(#"{"cmd":"mute_peer","peer":"eli"}"#)
            try ana.expect("mute_changed") {
                $0.string("peer") == "eli" && $0.bool("muted") == true && $0.string("by") == "bo"
            }
            try eli.expect("asked_to_mute") { $0.string("by") == "bo" }
            #expect(!ana.sees("asked_to_mute", within: 0.3))

            eli.send(#"{"cmd":"step_down"}"#)
            try ana.expect("role_changed") {
                $0.string("peer") == "eli" && $0.string("role") == "audience" && $0.string("by") == "eli"
            }
        }
    }

    @Test func removeWithAReasonAndRefuseTheRejoin() throws {
        try withServer { server, bots in
            let ana = try server.joinedBot("ana", role: "host")
            let eli = try server.joinedBot("eli", role: "audience")
            bots += [ana, eli]
            ana.send(#"{"cmd":"remove","peer":"eli","reason":"spam in chat"}"#)
            try eli.expect("removed") { $0.string("peer") == "eli" && $0.string("reason") == "spam in chat" }
            try ana.expect("removed") { $0.string("peer") == "eli" && $0.string("by") == "ana" }
            #expect(try eli.waitForExit() == 3)

            let again = try server.bot(try server.token("eli", role: "audience"))
            bots.append(again)
            #expect(try again.waitForExit() == 6)
            #expect(!again.output.all.contains { $0.contains(#""event":"joined""#) })
        }
    }

    @Test func topicAndChatToEveryoneOnePeerAndARole() throws {
        try withServer { server, bots in
            let ana = try server.joinedBot("ana", role: "host")
            let chen = try server.joinedBot("chen", role: "speaker")
            let eli = try server.joinedBot("eli", role: "audience")
            bots += [ana, chen, eli]

            ana.send(#"{"cmd":"topic","text":"Friday terminal hour"}"#)
            for bot in [ana, chen, eli] {
                try bot.expect("topic_changed") {
                    $0.string("topic") == "Friday terminal hour" && $0.string("by") == "ana"
                }
            }

            eli.send(#"{"cmd":"chat","text":"hello all"}"#)
            for bot in [ana, chen, eli] {
                try bot.expect("chat") { $0.string("text") == "hello all" && $0.string("from") == "eli" }
            }
            eli.send(#"{"cmd":"chat","text":"just you","to":"ana"}"#)
            try ana.expect("chat") { $0.string("text") == "just you" && $0.object("to")?.string("peer") == "ana" }
            try eli.expect("chat") { $0.string("text") == "just you" }
            ana.send(#"{"cmd":"chat","text":"stage only","role":"speaker"}"#)
            try chen.expect("chat") {
                $0.string("text") == "stage only" && $0.object("to")?.string("role") == "speaker"
            }
            try ana.expect("chat") { $0.string("text") == "stage only" }
            #expect(!chen.output.all.contains { $0.contains("just you") })
            #expect(!eli.sees("chat", within: 0.3) { $0.string("text") == "stage only" })
        }
    }

    @Test func endRoomRefusesJoinsUntilAHostReopens() throws {
        try withServer { server, bots in
            let ana = try server.joinedBot("ana", role: "host")
            let eli = try server.joinedBot("eli", role: "audience")
            bots += [ana, eli]
            ana.send(#"{"cmd":"end_room","reason":"that's all"}"#)
            try eli.expect("room_ended") { $0.string("reason") == "that's all" && $0.string("by") == "ana" }
            #expect(try eli.waitForExit() == 4)
            #expect(try ana.waitForExit() == 4)

            let late = try server.bot(try server.token("fay", role: "audience"))
            let moderator = try server.bot(try server.token("bo", role: "moderator"))
            bots += [late, moderator]
            #expect(try late.waitForExit() == 6)
            #expect(try moderator.waitForExit() == 6)
            #expect(late.output.all.contains { $0.contains("(4009)") })

            let host = try server.joinedBot("ana", role: "host")
            let listener = try server.joinedBot("fay", role: "audience")
            bots += [host, listener]
            #expect(try listener.finish() == 0)
        }
    }

    @Test func refusedActionsChangeNothingAndSayWhy() throws {
        try withServer { server, bots in
            let ana = try server.joinedBot("ana", role: "host")
            let bo = try server.joinedBot("bo", role: "moderator")
            let eli = try server.joinedBot("eli", role: "audience")
            let fay = try server.joinedBot("fay", role: "audience")
            bots += [ana, bo, eli, fay]
            let attempts: [(BotProcess, String, String)] = [
                (eli, #"{"cmd":"invite","peer":"fay","id":1}"#, "only hosts and moderators can invite people to speak"),
                (eli, #"{"cmd":"mute_peer","peer":"bo","id":2}"#, "only hosts and moderators can mute others"),
                (eli, #"{"cmd":"remove","peer":"fay","id":3}"#, "only hosts and moderators can remove people"),
                (eli, #"{"cmd":"end_room","id":4}"#, "only hosts can end the room"),
                (
                    bo, #"{"cmd":"set_role","peer":"fay","role":"host","id":5}"#,
                    "a moderator cannot make someone a host"
                ),
                (bo, #"{"cmd":"end_room","id":6}"#, "only hosts can end the room"),
                (
                    bo, #"{"cmd":"remove","peer":"ana","id":7}"#,
                    "you cannot remove Ana: a host is not below a moderator"
                ),
            ]
            for (index, attempt) in attempts.enumerated() {
                attempt.0.send(attempt.1)
                let error = try attempt.0.expect("error")
                #expect(error.string("code") == "forbidden")
                #expect(error.string("message") == attempt.2)
                #expect(error["id"] == .integer(Int64(index + 1)))
            }
            #expect(!ana.sees("role_changed", within: 0.3))
            #expect(!ana.sees("removed", within: 0.1))
            #expect(!ana.sees("invited", within: 0.1))
            #expect(!ana.sees("room_ended", within: 0.1))

            eli.send("this is not json")
            #expect(try eli.expect("error").string("code") == "invalid_json")
            eli.send(#"{"cmd":"dance"}"#)
            #expect(try eli.expect("error").string("code") == "unknown_command")
            eli.send(#"{"cmd":"invite"}"#)
            #expect(try eli.expect("error").string("code") == "bad_command")
            eli.send(#"{"cmd":"raise_hand"}"#)
            try ana.expect("hand_raised") { $0.string("peer") == "eli" }
        }
    }

    @Test func aSecondConnectionOfTheSameIdentityReplacesTheFirst() throws {
        try withServer { server, bots in
            let ana = try server.joinedBot("ana", role: "host")
            let first = try server.joinedBot("eli", role: "audience")
            bots += [ana, first]
            try ana.expect("peer_joined") { $0.string("peer") == "eli" }
            let second = try server.joinedBot("eli", role: "audience")
            bots.append(second)
            #expect(try first.waitForExit() == 7)
            #expect(!ana.sees("peer_left", within: 0.3))
            second.send(#"{"cmd":"raise_hand"}"#)
            try ana.expect("hand_raised") { $0.string("peer") == "eli" }
        }
    }
}
