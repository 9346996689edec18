import Testing

@testable import RoomCore

let people = [
    peer("ana", "Ana"), peer("anna", "Anna"), peer("ana-lee", "Ana Lee"), peer("bo", "Bo"), peer("x7", "Chen"),
    peer("d1", "Dara"), peer("d2", "Dara"),
]

func parse(_ line: String) -> Result<Command, CommandError> {
    Command.parse(line, peers: people, roles: roles)
}

@Suite struct CommandGrammarTests {
    @Test func everyCommand() {
        #expect(parse("/invite bo") == .success(.invite("bo")))
        #expect(parse("/move bo mod") == .success(.move("bo", .moderator)))
        #expect(parse("/move bo Speaker") == .success(.move("bo", .speaker)))
        #expect(parse("/move bo listener") == .success(.move("bo", .audience)))
        #expect(parse("/move bo aud") == .success(.move("bo", .audience)))
        #expect(parse("/mute chen") == .success(.mute("x7")))
        #expect(parse("/remove bo") == .success(.remove("bo", reason: nil)))
        #expect(parse("/remove bo  being rude ") == .success(.remove("bo", reason: "being rude")))
        #expect(parse("/ban bo") == .success(.remove("bo", reason: nil, ban: true)))
        #expect(parse("/ban Bo  spam, again ") == .success(.remove("bo", reason: "spam, again", ban: true)))
        #expect(parse("/hand") == .success(.hand))
        #expect(parse("/play") == .success(.play(.status)))
        #expect(parse("/play stop") == .success(.play(.stop)))
        #expect(parse("/play STOP") == .success(.play(.stop)))
        #expect(parse("/play ./stop") == .success(.play(.file("./stop"))))
        #expect(parse("/play /srv/jingles/intro one.opus") == .success(.play(.file("/srv/jingles/intro one.opus"))))
        #expect(parse("/raise") == .success(.raiseHand))
        #expect(parse("/LOWER") == .success(.lowerHand))
        #expect(parse("/raise now") == .failure(.unexpectedArgument(command: "raise", text: "now", usage: "/raise")))
        #expect(parse("/next") == .success(.inviteNext))
        #expect(parse("/next bo") == .failure(.unexpectedArgument(command: "next", text: "bo", usage: "/next")))
        #expect(parse("/chat hello  there") == .success(.chat("hello  there")))
        #expect(parse("/dm bo see you") == .success(.dm("bo", "see you")))
        #expect(parse("/topic Friday hour") == .success(.topic("Friday hour")))
        #expect(parse("/end") == .success(.end(reason: nil)))
        #expect(parse("/end that's all") == .success(.end(reason: "that's all")))
        #expect(parse("/help") == .success(.help))
        #expect(parse("  /HELP  ") == .success(.help))
    }

    /// Words people reach for that are another command here are suggested, never obeyed: /quit does not leave.
    @Test func wordsPeopleTryAreSuggestedAsTheCommandTheyMean() {
        #expect(parse("/quit") == .failure(.unknownCommand("quit", suggestion: "leave")))
        #expect(parse("/EXIT") == .failure(.unknownCommand("exit", suggestion: "leave")))
        #expect(parse("/bye now") == .failure(.unknownCommand("bye", suggestion: "leave")))
        #expect(parse("/msg bo hi") == .failure(.unknownCommand("msg", suggestion: "dm")))
        #expect(
            CommandError.unknownCommand("quit", suggestion: "leave").description
                == "unknown command /quit; did you mean /leave? (/help lists them)")
        #expect(Command.wordsPeopleTry.values.allSatisfy { word in Command.usages.contains { $0.name == word } })
        #expect(Command.wordsPeopleTry.keys.allSatisfy { word in !Command.usages.contains { $0.name == word } })
    }

    @Test func plainTextIsChat() {
        #expect(parse(" hello /world ") == .success(.chat("hello /world")))
        #expect(parse("//not a command") == .success(.chat("/not a command")))
        #expect(parse("   ") == .failure(.empty))
    }

    @Test func namesMatchByUniquePrefixAnyCase() {
        #expect(parse("/invite BO") == .success(.invite("bo")))
        #expect(parse("/invite ch") == .success(.invite("x7")))
        #expect(parse("/invite x") == .success(.invite("x7")), "identities match too")
        #expect(parse("/invite anna") == .success(.invite("anna")))
    }

    @Test func anExactMatchWinsOverLongerNames() {
        #expect(parse("/invite ana") == .success(.invite("ana")))
    }

    @Test func quotedNamesMayHoldSpaces() {
        #expect(parse(#"/invite "ana lee""#) == .success(.invite("ana-lee")))
        #expect(parse(#"/dm "Ana Lee" hi there"#) == .success(.dm("ana-lee", "hi there")))
        #expect(parse(#"/invite "ana lee"#) == .failure(.unterminatedQuote))
    }

    @Test func ambiguousNamesListTheCandidates() {
        #expect(
            parse("/invite an")
                == .failure(
                    .ambiguousName("an", candidates: ["Ana (ana)", "Ana Lee (ana-lee)", "Anna (anna)"], more: 0)))
        #expect(
            parse("/mute dara") == .failure(.ambiguousName("dara", candidates: ["Dara (d1)", "Dara (d2)"], more: 0)))
        #expect(
            CommandError.ambiguousName("an", candidates: ["Ana (ana)", "Anna (anna)"], more: 4).description
                == "\"an\" matches 6 people: Ana (ana), Anna (anna) and 4 more; type more of the name")
    }

    @Test func theCandidateListIsBounded() {
        let many = (0..<12).map { peer("u\($0)", "Sam \($0)") }
        guard
            case .failure(.ambiguousName(_, let candidates, let more)) = Command.parse(
                "/invite sam", peers: many, roles: roles)
        else {
            Issue.record("expected an ambiguous name")
            return
        }
        #expect(candidates.count == Command.maxCandidates)
        #expect(more == 7)
    }

    @Test func unknownNamesSuggestSimilarOnes() {
        #expect(parse("/invite zed") == .failure(.unknownName("zed", similar: [], more: 0)))
        #expect(parse("/invite lee") == .failure(.unknownName("lee", similar: ["Ana Lee (ana-lee)"], more: 0)))
        #expect(CommandError.unknownName("zed", similar: [], more: 0).description == "no one here is called \"zed\"")
        #expect(
            CommandError.unknownName("lee", similar: ["Ana Lee (ana-lee)"], more: 0).description
                == "no one here is called \"lee\"; did you mean Ana Lee (ana-lee)?")
    }

    /// Found by the commands fuzz target: looking for similar names with Foundation's `contains` trapped on a
    /// typed name holding NUL characters, which a line read in --plain can hold.
    @Test func aNameWithNULCharactersIsUnknownNotACrash() {
        let typed = "e" + String(repeating: "\u{0}", count: 7)
        let room = [peer("emile", "Émile"), peer("bo", "Bo")]
        #expect(
            Command.parse("/mute " + typed, peers: room, roles: roles)
                == .failure(.unknownName(typed, similar: [], more: 0)))
    }

    /// Found by the commands fuzz target: a space followed by a combining mark is one cluster, and trimming the
    /// line cluster by cluster dropped the mark with the space, so padding a line changed what it said.
    @Test func paddingNeverEatsACombiningMark() {
        let line = "\u{652}owe \"=\u{0}"
        #expect(parse(line) == .success(.chat(line)))
        #expect(parse("  " + line + " \t") == .success(.chat(line)))
        #expect(parse("/chat \u{301}a ") == .success(.chat("\u{301}a")))
        #expect(parse("/mute  \u{301}bo") == .failure(.unknownName("\u{301}bo", similar: [], more: 0)))
    }

    /// Found by the same target: a quote followed by a combining mark is one cluster, so a name starting with a
    /// mark could not be quoted.
    @Test func aNameStartingWithACombiningMarkCanBeQuoted() {
        let room = people + [peer("owe", "\u{652}owe \"=")]
        #expect(Command.parse(#"/invite "\#u{652}owe \"=""#, peers: room, roles: roles) == .success(.invite("owe")))
        #expect(Command.parse(#"/dm "Ana Lee" hi"#, peers: room, roles: roles) == .success(.dm("ana-lee", "hi")))
    }

    @Test func missingAndExtraArguments() {
        #expect(
            parse("/invite") == .failure(.missingArgument(command: "invite", argument: "NAME", usage: "/invite NAME")))
        #expect(
            parse("/move bo") == .failure(.missingArgument(command: "move", argument: "ROLE", usage: "/move NAME ROLE"))
        )
        #expect(parse("/dm bo") == .failure(.missingArgument(command: "dm", argument: "TEXT", usage: "/dm NAME TEXT")))
        #expect(parse("/chat") == .failure(.missingArgument(command: "chat", argument: "TEXT", usage: "/chat TEXT")))
        // `/topic` alone asks what the topic is (a listener reads it again).
        #expect(parse("/topic  ") == .success(.showTopic))
        #expect(parse("/hand up") == .failure(.unexpectedArgument(command: "hand", text: "up", usage: "/hand")))
        #expect(
            parse("/invite bo now")
                == .failure(.unexpectedArgument(command: "invite", text: "now", usage: "/invite NAME")))
        #expect(
            parse("/invite \"\"")
                == .failure(.missingArgument(command: "invite", argument: "NAME", usage: "/invite NAME")))
        #expect(
            CommandError.missingArgument(command: "invite", argument: "NAME", usage: "/invite NAME").description
                == "/invite needs NAME: /invite NAME")
        #expect(
            CommandError.unexpectedArgument(command: "invite", text: "Lee", usage: "/invite NAME").description
                == "/invite does not take \"Lee\": /invite NAME; quote names with spaces: \"Ana Lee\"")
        #expect(
            CommandError.unexpectedArgument(command: "hand", text: "up", usage: "/hand").description
                == "/hand does not take \"up\": /hand")
    }

    @Test func volumeTakesANameAndAPercentFrom0To200() {
        #expect(parse("/volume bo 70") == .success(.volume("bo", percent: 70)))
        #expect(parse("/VOLUME ch 150%") == .success(.volume("x7", percent: 150)))
        #expect(parse("/volume \"ana lee\" 0") == .success(.volume("ana-lee", percent: 0)))
        #expect(parse("/volume bo 200") == .success(.volume("bo", percent: 200)))
        #expect(parse("/volume bo") == .success(.volume("bo", percent: nil)))
        let usage = "/volume NAME [PERCENT]"
        #expect(parse("/volume bo 201") == .failure(.badPercent("201", usage: usage)))
        #expect(parse("/volume bo -5") == .failure(.badPercent("-5", usage: usage)))
        #expect(parse("/volume bo loud") == .failure(.badPercent("loud", usage: usage)))
        #expect(parse("/volume bo 7.5") == .failure(.badPercent("7.5", usage: usage)))
        #expect(parse("/volume bo %") == .failure(.badPercent("%", usage: usage)))
        #expect(
            parse("/volume bo 50 now") == .failure(.unexpectedArgument(command: "volume", text: "now", usage: usage)))
        #expect(parse("/volume") == .failure(.missingArgument(command: "volume", argument: "NAME", usage: usage)))
        #expect(
            parse("/volume an 50")
                == .failure(
                    .ambiguousName("an", candidates: ["Ana (ana)", "Ana Lee (ana-lee)", "Anna (anna)"], more: 0)))
        #expect(
            CommandError.badPercent("loud", usage: usage).description
                == "\"loud\" is not a volume; give a whole percent from 0 to 200: /volume NAME [PERCENT]")
    }

    @Test func volumeNeverReachesTheServer() {
        var state = RoomState(roles: roles)
        #expect(reduce(&state, .command(.volume("bo", percent: 50))) == [])
    }

    @Test func unknownCommandsAndRoles() {
        #expect(parse("/fly away") == .failure(.unknownCommand("fly", suggestion: nil)))
        #expect(parse("/") == .failure(.unknownCommand("", suggestion: nil)))
        #expect(
            CommandError.unknownCommand("fly", suggestion: nil).description
                == "unknown command /fly; type /help for the commands")
        // A mistyped command suggests the one it was probably meant to be, and never becomes chat.
        #expect(parse("/inivte bea") == .failure(.unknownCommand("inivte", suggestion: "invite")))
        #expect(parse("/wh") == .failure(.unknownCommand("wh", suggestion: "who")))
        #expect(parse("/withdrw eli") == .failure(.unknownCommand("withdrw", suggestion: "withdraw")))
        #expect(
            CommandError.unknownCommand("inivte", suggestion: "invite").description
                == "unknown command /inivte; did you mean /invite? (/help lists them)")
        #expect(
            parse("/move bo boss")
                == .failure(.unknownRole("boss", known: ["host", "moderator", "speaker", "audience", "recorder"])))
        #expect(
            CommandError.unknownRole("boss", known: ["host", "audience"]).description
                == "no role \"boss\"; roles: host, audience")
    }

    @Test func helpListsEveryCommand() {
        for entry in Command.usages { #expect(Command.helpText.contains(entry.usage)) }
    }
}
