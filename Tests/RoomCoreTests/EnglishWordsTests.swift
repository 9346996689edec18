import RoomCore
import Testing

@Suite struct EnglishWordsTests {
    @Test func listsJoinTheLastWithAnd() {
        #expect(English.list([]) == "")
        #expect(English.list(["Ana"]) == "Ana")
        #expect(English.list(["Ana", "Bo"]) == "Ana and Bo")
        #expect(English.list(["Ana", "Bo", "Chen"]) == "Ana, Bo and Chen")
    }

    @Test func articlesFollowTheFirstLetter() {
        #expect(English.article("speaker") == "a speaker")
        #expect(English.article("audience member") == "an audience member")
        #expect(English.article("Owner") == "an Owner")
        #expect(English.article("") == "")
    }
}
