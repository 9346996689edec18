import Dispatch
import Foundation
import RoomCore
import RoomProtocol
import RoomTesting
import Synchronization
import Testing

@testable import RoomServer
@testable import RoomTransport

/// What each lobby is sent: one message per gathered change to a lobby that keeps up, and to a lobby that reads
/// too slowly, once it has read what it had, one message with each room it missed as the room is then.
@Suite(.ownThread) struct DirectoryWatcherTests {
    /// A lobby's connection that the test drains by hand.
    final class Link: DirectoryWatcher, @unchecked Sendable {
        // @unchecked: touched by one thread at a time (the test's, or the loop's while the test waits).
        let id: Int
        var isBacklogged = false
        private(set) var sent: [String] = []
        private var drained: (() -> Void)?

        init(id: Int) { self.id = id }

        var description: String { "link \(id)" }

        func send(_ prepared: PreparedMessage) {
            guard case .text(let text) = prepared.message else {
                Issue.record("the directory sent a binary message")
                return
            }
            sent.append(text)
        }

        func whenDrained(_ callback: @escaping () -> Void) {
            if isBacklogged { drained = callback } else { callback() }
        }

        /// The peer has read everything: the directory hears so, as from the connection.
        func drain() {
            isBacklogged = false
            let callback = drained
            drained = nil
            callback?()
        }

        /// What was sent, decoded.
        var messages: [DirectoryMessage] {
            get throws { try sent.map { try DirectoryCodec.decodeMessage(Array($0.utf8)) } }
        }
    }

    /// No loop: every change goes out as it comes.
    let directory = RoomDirectory(maxWatchers: 10, log: ServerLog(minimum: .error))

    func room(_ name: String, topic: String = "", listeners: Int = 0) -> RoomListing {
        RoomListing(
            room: name, topic: topic, stage: [.init(name: "Ana", role: .host)], onStage: 1, listeners: listeners,
            raisedHands: 0, startedAt: 1_764_412_800_000)
    }

    func change(_ listing: ListingChange) {
        var outcome = Outcome()
        outcome.listing = listing
        directory.consume(outcome, in: listing.room)
    }

    @Test func aSlowLobbyGetsEachRoomAsItIsOnceItHasCaughtUp() throws {
        change(.added(room("jazz", topic: "Late night jazz"), .started))
        change(.added(room("quiet"), .started))
        let keeping = Link(id: 1)
        let slow = Link(id: 2)
        directory.watch(keeping)
        directory.watch(slow)
        slow.isBacklogged = true

        change(.updated(room("jazz", topic: "Jazz till late")))
        change(.added(room("rust", topic: "Rust on Linux"), .started))
        change(.updated(room("jazz", topic: "Jazz till dawn", listeners: 3)))
        change(.removed(room: "rust", .ended))
        change(.removed(room: "quiet", .empty))
        change(.added(room("morning"), .listed))

        #expect(
            keeping.sent == [
                #"{"type":"rooms","seq":2,"rooms":[{"name":"jazz","topic":"Late night jazz","stage":[{"name":"Ana","role":"host"}],"on_stage":1,"listeners":0,"raised_hands":0,"started_at":1764412800000},{"name":"quiet","topic":"","stage":[{"name":"Ana","role":"host"}],"on_stage":1,"listeners":0,"raised_hands":0,"started_at":1764412800000}]}"#,
                #"{"type":"rooms_changed","seq":3,"changes":[{"change":"updated","room":{"name":"jazz","topic":"Jazz till late","stage":[{"name":"Ana","role":"host"}],"on_stage":1,"listeners":0,"raised_hands":0,"started_at":1764412800000}}]}"#,
                #"{"type":"rooms_changed","seq":4,"changes":[{"change":"added","why":"started","room":{"name":"rust","topic":"Rust on Linux","stage":[{"name":"Ana","role":"host"}],"on_stage":1,"listeners":0,"raised_hands":0,"started_at":1764412800000}}]}"#,
                #"{"type":"rooms_changed","seq":5,"changes":[{"change":"updated","room":{"name":"jazz","topic":"Jazz till dawn","stage":[{"name":"Ana","role":"host"}],"on_stage":1,"listeners":3,"raised_hands":0,"started_at":1764412800000}}]}"#,
                #"{"type":"rooms_changed","seq":6,"changes":[{"change":"removed","why":"ended","name":"rust"}]}"#,
                #"{"type":"rooms_changed","seq":7,"changes":[{"change":"removed","why":"empty","name":"quiet"}]}"#,
                #"{"type":"rooms_changed","seq":8,"changes":[{"change":"added","why":"listed","room":{"name":"morning","topic":"","stage":[{"name":"Ana","role":"host"}],"on_stage":1,"listeners":0,"raised_hands":0,"started_at":1764412800000}}]}"#,
            ])
        // Behind: nothing more while it has not read its list.
        #expect(slow.sent.count == 1)

        slow.drain()
        // One message, numbered as the latest and since the list; rust started and ended unseen, so it is not
        // mentioned; jazz as it is now, in the order the rooms first changed.
        #expect(
            slow.sent.dropFirst() == [
                #"{"type":"rooms_changed","seq":8,"since":2,"changes":[{"change":"updated","room":{"name":"jazz","topic":"Jazz till dawn","stage":[{"name":"Ana","role":"host"}],"on_stage":1,"listeners":3,"raised_hands":0,"started_at":1764412800000}},{"change":"removed","why":"empty","name":"quiet"},{"change":"added","why":"listed","room":{"name":"morning","topic":"","stage":[{"name":"Ana","role":"host"}],"on_stage":1,"listeners":0,"raised_hands":0,"started_at":1764412800000}}]}"#
            ])
        #expect(try slow.messages.last?.follows(2) == true)

        // Caught up: the next change reaches both alike, and follows for both.
        change(.updated(room("morning", topic: "Coffee")))
        #expect(keeping.sent.last == slow.sent.last)
        #expect(try slow.messages.last?.follows(8) == true)
        #expect(keeping.sent.count == 8)
        #expect(slow.sent.count == 3)
        #expect(directory.messagesFolded == 6)
    }

    @Test func aRoomThatChangedAndChangedBackStillBringsTheLobbyUpToTheLatestNumber() throws {
        change(.added(room("jazz"), .started))
        let slow = Link(id: 1)
        directory.watch(slow)
        slow.isBacklogged = true
        change(.updated(room("jazz", topic: "For a moment")))
        change(.updated(room("jazz")))
        slow.drain()
        #expect(slow.sent.dropFirst() == [#"{"type":"rooms_changed","seq":3,"since":1,"changes":[]}"#])
        change(.updated(room("jazz", listeners: 1)))
        #expect(try slow.messages.last?.follows(3) == true)
    }

    @Test func aRoomThatLeftAndCameBackWhileALobbyWasBehindIsAddedWithTheLatestReason() {
        change(.added(room("jazz"), .started))
        let slow = Link(id: 1)
        directory.watch(slow)
        slow.isBacklogged = true
        change(.added(room("rust"), .started))
        change(.removed(room: "rust", .unlisted))
        change(.added(room("rust", topic: "Back"), .listed))
        change(.removed(room: "jazz", .unlisted))
        change(.added(room("jazz"), .listed))
        change(.removed(room: "jazz", .ended))
        slow.drain()
        #expect(
            slow.sent.dropFirst() == [
                #"{"type":"rooms_changed","seq":7,"since":1,"changes":[{"change":"added","why":"listed","room":{"name":"rust","topic":"Back","stage":[{"name":"Ana","role":"host"}],"on_stage":1,"listeners":0,"raised_hands":0,"started_at":1764412800000}},{"change":"removed","why":"ended","name":"jazz"}]}"#
            ])
    }

    /// A list taken while changes are being gathered holds them already; once they go out, the next list is
    /// numbered after them, so a lobby that connects then sees no gap.
    @Test func aListIsNumberedAfterTheChangesThatWentOutSinceItWasMade() throws {
        let loop = try EventLoop(name: "directory-test")
        defer { loop.shutdown() }
        let first = Link(id: 1)
        let second = Link(id: 2)
        let directory = self.directory
        func onLoop(_ work: @escaping @Sendable () -> Void) {
            let done = DispatchSemaphore(value: 0)
            loop.execute {
                work()
                done.signal()
            }
            done.wait()
        }
        onLoop { [self] in
            directory.loop = loop
            change(.added(room("jazz"), .started))
            // Within the gathering window: held back, but the list made now holds it.
            change(.updated(room("jazz", topic: "Gathered")))
            directory.watch(first)
        }
        let deadline = DispatchTime.now() + 5
        while onLoopCount(first, loop) < 2 && DispatchTime.now() < deadline { usleep(5000) }
        onLoop { directory.watch(second) }
        #expect(
            try first.messages == [
                .rooms([room("jazz", topic: "Gathered")], seq: 1),
                .changed([.updated(room("jazz", topic: "Gathered"))], seq: 2),
            ])
        #expect(try second.messages == [.rooms([room("jazz", topic: "Gathered")], seq: 2)])
    }

    func onLoopCount(_ link: Link, _ loop: EventLoop) -> Int {
        let count = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            count.withLock { $0 = link.sent.count }
            done.signal()
        }
        done.wait()
        return count.withLock { $0 }
    }

    @Test func aListAskedForWhileBehindReplacesWhatWasMissed() throws {
        change(.added(room("jazz"), .started))
        let slow = Link(id: 1)
        directory.watch(slow)
        slow.isBacklogged = true
        change(.updated(room("jazz", topic: "One")))
        directory.received(.text(#"{"type":"list"}"#), from: slow, now: 1000)
        change(.updated(room("jazz", topic: "Two")))
        slow.drain()
        // The list holds the change it missed; behind again after it, it is told only what changed since.
        #expect(
            try slow.messages == [
                .rooms([room("jazz")], seq: 1), .rooms([room("jazz", topic: "One")], seq: 2),
                .changed([.updated(room("jazz", topic: "Two"))], seq: 3, since: 2),
            ])
    }
}
