import Testing

@testable import Demo

private func line(_ speaker: String, _ number: Int, kind: DemoClip.Kind = .talk) -> DemoClip {
    DemoClip(
        file: "\(speaker)-\(number).wav", speaker: speaker, voice: "en", kind: kind, duration: 1,
        text: "\(speaker) \(number)")
}

private let script = [line("sam", 1), line("imogen", 1), line("callum", 1), line("sam", 2)]

/// Says lines until nobody can speak or `limit` lines were said; returns the files in order.
private func say(_ conversation: inout Conversation, limit: Int) -> [String] {
    var said: [String] = []
    while said.count < limit, let next = conversation.next() {
        said.append(next.file)
        conversation.finished(next)
    }
    return said
}

@Suite struct ConversationTests {
    @Test func nobodySpeaksBeforeAnyoneIsAllowed() {
        var conversation = Conversation(script: script)
        #expect(conversation.next() == nil)
    }

    @Test func linesGoInScriptOrderAndLoop() {
        var conversation = Conversation(script: script)
        for speaker in ["sam", "imogen", "callum"] { conversation.allow(speaker) }
        #expect(
            say(&conversation, limit: 6) == [
                "sam-1.wav", "imogen-1.wav", "callum-1.wav", "sam-2.wav", "sam-1.wav", "imogen-1.wav",
            ])
    }

    @Test func oneVoiceAtATime() {
        var conversation = Conversation(script: script)
        conversation.allow("sam")
        conversation.allow("imogen")
        #expect(conversation.next()?.file == "sam-1.wav")
        #expect(conversation.next() == nil)
        #expect(conversation.current?.file == "sam-1.wav")
    }

    @Test func silencedSpeakersAreSkippedAndCutOff() {
        var conversation = Conversation(script: script)
        for speaker in ["sam", "imogen", "callum"] { conversation.allow(speaker) }
        #expect(conversation.next()?.file == "sam-1.wav")
        #expect(conversation.silence("sam") == true)
        #expect(conversation.current == nil)
        #expect(say(&conversation, limit: 3) == ["imogen-1.wav", "callum-1.wav", "imogen-1.wav"])
        #expect(conversation.silence("sam") == false)
    }

    @Test func aLineCutOffEarlierDoesNotEndTheNextOne() {
        var conversation = Conversation(script: script)
        conversation.allow("sam")
        conversation.allow("imogen")
        let first = conversation.next()!
        conversation.silence("sam")
        let second = conversation.next()!
        #expect(conversation.finished(first) == false)
        #expect(conversation.current == second)
    }

    @Test func pendingLinesComeFirstInOrder() {
        var conversation = Conversation(script: script)
        for speaker in ["sam", "imogen", "dara", "zoe"] { conversation.allow(speaker) }
        #expect(conversation.next()?.file == "sam-1.wav")
        conversation.enqueue(line("dara", 1, kind: .guest))
        conversation.enqueue(line("zoe", 1, kind: .invited))
        conversation.finished(conversation.current!)
        #expect(say(&conversation, limit: 3) == ["dara-1.wav", "zoe-1.wav", "imogen-1.wav"])
    }

    @Test func pendingLinesOfSilencedSpeakersAreDropped() {
        var conversation = Conversation(script: script)
        conversation.allow("imogen")
        conversation.allow("zoe")
        conversation.enqueue(line("zoe", 1, kind: .invited))
        conversation.silence("zoe")
        #expect(conversation.pending.isEmpty)
        #expect(conversation.next()?.file == "imogen-1.wav")
    }

    @Test func aSpeakerAllowedAgainRejoinsTheTurns() {
        var conversation = Conversation(script: script)
        conversation.allow("imogen")
        #expect(say(&conversation, limit: 2) == ["imogen-1.wav", "imogen-1.wav"])
        conversation.allow("callum")
        #expect(say(&conversation, limit: 2) == ["callum-1.wav", "imogen-1.wav"])
    }
}
