import Foundation
import Platform
import RoomApp
import RoomCore
import Synchronization

/// A connection to one room: the real session, or a scripted one in tests and benchmarks.
///
/// What happens on the connection reaches the room as `AppAction`s, in order: the role table before the snapshot
/// that uses it (`.roles`), room and connection events (`.server`), notices, the round-trip time, the sound's
/// reports (`.microphone`, `.volumes`), and last `.sessionEnded`.
public protocol RoomConnection: AnyObject, Sendable {
    /// Connects; what happens then arrives through `deliver`, from any thread.
    func start(deliver: @escaping @Sendable (AppAction) -> Void)
    /// Sends a request to the server.
    func send(_ request: ClientRequest)
    /// Leaves the room; `.sessionEnded` follows.
    func leave()
    /// Stops the connection's threads once it has ended.
    func shutdown()
    /// Hands a command to the connection's sound: open or close the microphone (open only while the person's
    /// role may publish), mute it, or set how loud someone sounds to this person (local: the server never
    /// hears of it).
    func perform(_ command: SoundCommand)
    /// While the connection is down, tries again now instead of at the next scheduled try.
    func retryNow()
}

extension RoomConnection {
    /// A connection without sound ignores it.
    public func perform(_ command: SoundCommand) {}
}

/// Where the screen's loop learns that something happened on another thread: a queue of events and a pipe whose
/// read end the loop waits on (with `poll`), so it sleeps until there is work instead of polling.
public final class Inbox<Item: Sendable>: @unchecked Sendable {
    // @unchecked: the queue is guarded by the mutex; the two descriptors are set once and only read, and pipe
    // reads and writes are safe from any thread.
    private let queue = Mutex<[Item]>([])
    /// The descriptor to wait on for readability.
    public let wakeDescriptor: Int32
    private let writeDescriptor: Int32

    /// Creates the inbox and its pipe (both ends non-blocking).
    public init() throws(RuntimeError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            throw RuntimeError(place: "inbox", problem: "cannot create a pipe (errno \(errno))")
        }
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        wakeDescriptor = fds[0]
        writeDescriptor = fds[1]
    }

    deinit {
        close(wakeDescriptor)
        close(writeDescriptor)
    }

    /// Adds an item and wakes the loop (one byte per batch, so the pipe never fills).
    public func post(_ item: Item) {
        let wasEmpty = queue.withLock { items in
            items.append(item)
            return items.count == 1
        }
        if wasEmpty {
            var byte: UInt8 = 1
            _ = write(writeDescriptor, &byte, 1)
        }
    }

    /// Wakes the loop without posting anything (it then checks why it was woken).
    public func wake() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    /// Everything posted so far, oldest first.
    public func drain() -> [Item] {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeDescriptor, &buffer, buffer.count) > 0 {}
        return queue.withLock { items in
            defer { items.removeAll(keepingCapacity: true) }
            return items
        }
    }

    /// Waits up to `milliseconds` (forever when negative) for something to be posted.
    public func wait(milliseconds: Int) {
        var descriptor = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32(clamping: milliseconds))
    }
}

/// A failure of the screen's runtime, with where it happened.
public typealias RuntimeError = PlacedError
