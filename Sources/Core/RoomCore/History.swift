/// The last `capacity` items, oldest first; appending past the capacity drops the oldest in O(1).
public struct BoundedHistory<Element: Sendable>: Sendable, RandomAccessCollection {
    public let capacity: Int
    private var storage: [Element] = []
    /// Where the oldest item sits once the storage is full.
    private var head = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "a history needs room for at least one item")
        self.capacity = capacity
        storage.reserveCapacity(Swift.min(capacity, 64))
    }

    public mutating func append(_ element: Element) {
        if storage.count < capacity {
            storage.append(element)
        } else {
            storage[head] = element
            head = (head + 1) % capacity
        }
    }

    public mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        head = 0
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.count }
    public subscript(position: Int) -> Element { storage[(head + position) % storage.count] }
}

extension BoundedHistory: Equatable where Element: Equatable {
    public static func == (a: BoundedHistory, b: BoundedHistory) -> Bool {
        a.capacity == b.capacity && a.elementsEqual(b)
    }
}
