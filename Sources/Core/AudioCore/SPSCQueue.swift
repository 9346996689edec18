import Synchronization

/// A lock-free single-producer/single-consumer queue of whole values (packets, frames, events) in fixed slots.
///
/// One thread pushes, one other thread pops; both are wait-free and the queue never allocates after `init`.
/// Moving an element in or out transfers ownership: the consumer receives the very value the producer pushed, so
/// a pop releases nothing (an element that owns memory, such as an array, is freed wherever its last owner drops
/// it, which the caller controls).
public final class SPSCQueue<Element: Sendable>: @unchecked Sendable {
    // Safe to share: a slot is initialized by the producer before the releasing store of `pushCount` makes it
    // visible, and moved out by the consumer before the releasing store of `popCount` hands it back; each slot is
    // therefore touched by one thread at a time, with a happens-before edge at every hand-over.
    private let slots: UnsafeMutablePointer<Element>
    private let pushCount = Atomic<Int>(0)
    private let popCount = Atomic<Int>(0)

    /// The most elements the queue can hold.
    public let capacity: Int

    /// Allocates `capacity` slots (at least one).
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        slots = UnsafeMutablePointer<Element>.allocate(capacity: self.capacity)
    }

    deinit {
        let popped = popCount.load(ordering: .acquiring)
        let pushed = pushCount.load(ordering: .acquiring)
        var index = popped
        while index != pushed {
            (slots + index % capacity).deinitialize(count: 1)
            index &+= 1
        }
        slots.deallocate()
    }

    /// Elements waiting. Exact on the consumer's thread; a lower bound anywhere else.
    public var count: Int {
        pushCount.load(ordering: .acquiring) &- popCount.load(ordering: .acquiring)
    }

    /// Producer only: appends `element`, or returns false (and drops it) when the queue is full.
    @discardableResult
    public func push(_ element: consuming Element) -> Bool {
        let pushed = pushCount.load(ordering: .relaxed)
        guard pushed &- popCount.load(ordering: .acquiring) < capacity else { return false }
        (slots + pushed % capacity).initialize(to: element)
        pushCount.store(pushed &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer only: removes and returns the oldest element, or nil when the queue is empty.
    public func pop() -> Element? {
        let popped = popCount.load(ordering: .relaxed)
        guard pushCount.load(ordering: .acquiring) != popped else { return nil }
        let element = (slots + popped % capacity).move()
        popCount.store(popped &+ 1, ordering: .releasing)
        return element
    }
}
