/// A sorted multiset kept in chunks of a few hundred elements, so inserting or removing in a list of
/// 10,000 moves at most one chunk's worth of memory instead of the whole list, and never re-sorts.
///
/// Search is two binary searches (chunk, then place in the chunk); access by position is a binary search
/// over the chunk start offsets.
public struct SortedList<Element: Comparable & Sendable>: Sendable {
    /// A chunk splits in two when it grows past this.
    static var maxChunk: Int { 256 }

    private var chunks: [[Element]] = []
    /// `starts[i]` is the position of `chunks[i][0]` in the whole list.
    private var starts: [Int] = []
    public private(set) var count = 0

    public init() {}

    /// Builds the list from elements in any order (one sort, used for snapshots).
    public init(_ elements: some Sequence<Element>) {
        let sorted = elements.sorted()
        let size = Self.maxChunk / 2
        var position = 0
        while position < sorted.count {
            let end = Swift.min(position + size, sorted.count)
            chunks.append(Array(sorted[position..<end]))
            starts.append(position)
            position = end
        }
        count = sorted.count
    }

    public var isEmpty: Bool { count == 0 }

    /// Inserts after any equal elements.
    public mutating func insert(_ element: Element) {
        if chunks.isEmpty {
            chunks = [[element]]
            starts = [0]
            count = 1
            return
        }
        let c = chunkIndex(for: element)
        let i = Self.upperBound(chunks[c], element)
        chunks[c].insert(element, at: i)
        count += 1
        for k in (c + 1)..<starts.count { starts[k] += 1 }
        if chunks[c].count > Self.maxChunk { split(c) }
    }

    /// Removes one element equal to `element`; returns whether there was one.
    @discardableResult
    public mutating func remove(_ element: Element) -> Bool {
        guard !chunks.isEmpty else { return false }
        let c = chunkIndex(for: element)
        let i = Self.lowerBound(chunks[c], element)
        guard i < chunks[c].count, chunks[c][i] == element else { return false }
        chunks[c].remove(at: i)
        count -= 1
        for k in (c + 1)..<starts.count { starts[k] -= 1 }
        if chunks[c].isEmpty {
            chunks.remove(at: c)
            starts.remove(at: c)
        }
        return true
    }

    /// The position of an element equal to `element`, or `nil`.
    public func position(of element: Element) -> Int? {
        guard !chunks.isEmpty else { return nil }
        let c = chunkIndex(for: element)
        let i = Self.lowerBound(chunks[c], element)
        guard i < chunks[c].count, chunks[c][i] == element else { return nil }
        return starts[c] + i
    }

    /// The element at a position, `0..<count`.
    public subscript(position: Int) -> Element {
        precondition(position >= 0 && position < count, "SortedList position out of range")
        var low = 0
        var high = starts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if starts[mid] <= position { low = mid } else { high = mid - 1 }
        }
        return chunks[low][position - starts[low]]
    }

    /// The first chunk whose last element is not less than `element`, or the last chunk.
    private func chunkIndex(for element: Element) -> Int {
        var low = 0
        var high = chunks.count - 1
        while low < high {
            let mid = (low + high) / 2
            if chunks[mid][chunks[mid].count - 1] < element { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private mutating func split(_ c: Int) {
        let half = chunks[c].count / 2
        let tail = Array(chunks[c][half...])
        chunks[c].removeSubrange(half...)
        chunks.insert(tail, at: c + 1)
        starts.insert(starts[c] + half, at: c + 1)
    }

    private static func lowerBound(_ a: [Element], _ x: Element) -> Int {
        var low = 0
        var high = a.count
        while low < high {
            let mid = (low + high) / 2
            if a[mid] < x { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private static func upperBound(_ a: [Element], _ x: Element) -> Int {
        var low = 0
        var high = a.count
        while low < high {
            let mid = (low + high) / 2
            if x < a[mid] { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

extension SortedList: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public func makeIterator() -> Iterator { Iterator(chunks: chunks) }

    /// Walks the chunks directly instead of searching for each position.
    public struct Iterator: IteratorProtocol {
        let chunks: [[Element]]
        var chunk = 0
        var offset = 0

        public mutating func next() -> Element? {
            while chunk < chunks.count {
                if offset < chunks[chunk].count {
                    defer { offset += 1 }
                    return chunks[chunk][offset]
                }
                chunk += 1
                offset = 0
            }
            return nil
        }
    }
}

extension SortedList: Equatable {
    /// Equal when they hold the same elements in the same order, however they are chunked.
    public static func == (lhs: SortedList, rhs: SortedList) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }
}
