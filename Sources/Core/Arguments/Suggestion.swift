/// The candidate closest to a mistyped word, or nil when none is close enough to be a likely typo.
///
/// A candidate is close when the word is a prefix of it, or when the edit distance is at most a third of the
/// candidate's length (and at least 1), so `--lisen` suggests `--listen` but `--x` suggests nothing.
public func closestMatch(to word: String, among candidates: [String]) -> String? {
    let length = word.count
    let prefixed = candidates.filter { $0.hasPrefix(word) && length >= 3 }
    if prefixed.count == 1 { return prefixed[0] }
    var best: (candidate: String, distance: Int)?
    for candidate in candidates {
        let limit = max(1, candidate.count / 3)
        // The distance is at least the difference in length, so a word much longer or shorter is not compared:
        // a pasted paragraph costs a count, not a table of its length times the candidate's.
        guard abs(length - candidate.count) <= limit else { continue }
        let distance = editDistance(word, candidate)
        guard distance <= limit else { continue }
        if best == nil || distance < best!.distance { best = (candidate, distance) }
    }
    return best?.candidate
}

/// Levenshtein distance counting an adjacent swap as one edit, since swapped letters are the commonest typo.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { table[i][0] = i }
    for j in 0...b.count { table[0][j] = j }
    for i in 1...a.count {
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            var value = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                value = min(value, table[i - 2][j - 2] + 1)
            }
            table[i][j] = value
        }
    }
    return table[a.count][b.count]
}
