/// The small grammar the room's sentences share: refusals, narration and the line mode's lists.
public enum English {
    /// The word with its indefinite article: "a host", "an audience".
    public static func article(_ word: String) -> String {
        guard let first = word.first else { return word }
        return ("aeiou".contains(first.lowercased()) ? "an " : "a ") + word
    }

    /// Words joined as a list: "Ana", "Ana and Bo", "Ana, Bo and Chen".
    public static func list(_ words: [String]) -> String {
        switch words.count {
        case 0: return ""
        case 1: return words[0]
        default: return words.dropLast().joined(separator: ", ") + " and " + words[words.count - 1]
        }
    }
}
