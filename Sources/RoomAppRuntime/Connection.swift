import Foundation
import RoomCore
import Synchronization

/// What a connection to a room reports to the screen, in order.
public enum ConnectionEvent: Sendable, Equatable {
    /// The room's role table, sent before the snapshot that uses it.
    case roles(RoleTable)
    /// A room event (or a connection event: reconnecting, reconnected, error) with its sequence number.
    case server(ServerEvent, seq: UInt64)
    /// Something to tell the person that is not a room event ("Eli declined your invitation").
    case notice(Notice)
    /// The connection is over for good, with why, in plain words.
    case ended(String)
    /// The microphone's level (0–100), or nil when it is closed.
    case microphone(level: Int?)
    /// The connection's ping round-trip time, in whole milliseconds (at least 1).
    case roundTrip(milliseconds: Int)
    /// The local volumes kept from earlier sessions, in percent by identity (100 % is not listed).
    case volumes([String: Int])
}

/// A connection to one room: the real session, or a scripted one in tests and benchmarks.
public protocol RoomConnection: AnyObject, Sendable {
    /// Connects; events then arrive through `deliver`, from any thread.
    func start(deliver: @escaping @Sendable (ConnectionEvent) -> Void)
    /// Sends a request to the server.
    func send(_ request: ClientRequest)
    /// Leaves the room; an `.ended` event follows.
    func leave()
    /// Stops the connection's threads once it has ended.
    func shutdown()
    /// Tells the connection's sound whether the person's role may publish (the microphone is open only then)
    /// and whether they are muted. Called when either changes.
    func setAudio(mayPublish: Bool, muted: Bool)
    /// Sets how loud `peer` sounds to this person (0–200 %), kept for the next session. Local: the server never
    /// hears of it.
    func setVolume(_ percent: Int, for peer: PeerID)
}

extension RoomConnection {
    /// A connection without sound ignores it.
    public func setAudio(mayPublish: Bool, muted: Bool) {}
    /// A connection without sound ignores it.
    public func setVolume(_ percent: Int, for peer: PeerID) {}
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

/// A connection driven by the test or benchmark that holds it: it records requests and delivers what it is told.
public final class ScriptedConnection: RoomConnection, @unchecked Sendable {
    // @unchecked: all state is behind the mutex.
    private let state = Mutex<(deliver: (@Sendable (ConnectionEvent) -> Void)?, sent: [ClientRequest], left: Bool)>(
        (nil, [], false))
    private let volumeChanges = Mutex<[String]>([])
    /// What the connection does when started, e.g. deliver a snapshot.
    private let onStart: @Sendable (ScriptedConnection) -> Void

    public init(onStart: @escaping @Sendable (ScriptedConnection) -> Void = { _ in }) {
        self.onStart = onStart
    }

    public func start(deliver: @escaping @Sendable (ConnectionEvent) -> Void) {
        state.withLock { $0.deliver = deliver }
        onStart(self)
    }

    /// Delivers an event as if the server had sent it.
    public func deliver(_ event: ConnectionEvent) {
        state.withLock { $0.deliver }?(event)
    }

    public func send(_ request: ClientRequest) {
        state.withLock { $0.sent.append(request) }
    }

    public func leave() {
        let deliver = state.withLock { state -> (@Sendable (ConnectionEvent) -> Void)? in
            state.left = true
            state.sent.append(.leave)
            return state.deliver
        }
        deliver?(.ended("You left the room."))
    }

    public func shutdown() {}

    public func setVolume(_ percent: Int, for peer: PeerID) {
        volumeChanges.withLock { $0.append("\(peer.rawValue) \(percent)") }
    }

    /// The volumes set so far, as "PEER PERCENT".
    public var volumesSet: [String] { volumeChanges.withLock { $0 } }

    /// The requests sent so far.
    public var sent: [ClientRequest] { state.withLock { $0.sent } }
}
