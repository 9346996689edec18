/// The small pieces of English grammar that sentences about people and roles share, written once: the server's
/// refusals and the screen's narration both say "an audience member" and "Ana, Bo and Chen".
public enum EnglishWords {
    /// The word with its indefinite article: "a speaker", "an audience".
    public static func article(_ word: String) -> String {
        guard let first = word.first else { return word }
        return ("aeiou".contains(first.lowercased()) ? "an " : "a ") + word
    }

    /// Words joined as a list: "", "Ana", "Ana and Bo", "Ana, Bo and Chen".
    public static func list(_ words: [String]) -> String {
        switch words.count {
        case 0: return ""
        case 1: return words[0]
        default: return words.dropLast().joined(separator: ", ") + " and " + words[words.count - 1]
        }
    }
}
