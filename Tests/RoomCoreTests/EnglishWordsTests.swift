import RoomCore
import Testing

@Suite struct EnglishWordsTests {
    @Test func listsJoinTheLastWithAnd() {
        #expect(EnglishWords.list([]) == "")
        #expect(EnglishWords.list(["Ana"]) == "Ana")
        #expect(EnglishWords.list(["Ana", "Bo"]) == "Ana and Bo")
        #expect(EnglishWords.list(["Ana", "Bo", "Chen"]) == "Ana, Bo and Chen")
    }

    @Test func articlesFollowTheFirstLetter() {
        #expect(EnglishWords.article("speaker") == "a speaker")
        #expect(EnglishWords.article("audience member") == "an audience member")
        #expect(EnglishWords.article("Owner") == "an Owner")
        #expect(EnglishWords.article("") == "")
    }
}
