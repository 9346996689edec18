import Foundation
import Glibc
import RoomClient
import RoomCore
import RoomPersistence
import RoomProtocol
import RoomTesting
import Testing

/// Issue 27: a room's deadline was not written to the database, so after a restart a room whose last host had
/// left (with no moderator to take over) went on with nobody told, until the next departure of a host. Killed
/// with -9 and started again, the server ends the room at the time everyone was told, tells whoever comes back
/// meanwhile, and ends a room whose time passed while it was down as soon as it starts, with nobody back.
@Suite(.ownThread) struct DeadlineRestartTests {
    static let reason = "the last host left and none came back"

    func ending(in recorder: SessionRecorder) -> Int64? {
        for event in recorder.all {
            if case .message(let message) = event, case .roomEnding("ana", "Ana", let at?) = message.event { return at }
        }
        return nil
    }

    @Test(.timeLimit(.minutes(2))) func aRoomStillEndsAtTheAnnouncedTimeAfterKillNine() throws {
        let grace = ["--hostless-grace", "8"]
        let first = try ServerProcess(extraArguments: grace)
        defer { first.stopAndClean() }
        let (ana, _) = try joinedSession(first, "ana", role: "host", name: "Ana")
        defer { ana.shutdown() }
        let (eli, eliEvents) = try joinedSession(first, "eli", role: "audience", name: "Eli")
        defer { eli.shutdown() }
        _ = ana.send(.leave)
        _ = eliEvents.wait { _ in ending(in: eliEvents) != nil }
        let endsAt = try #require(ending(in: eliEvents), "no room_ending: \(eliEvents.all.suffix(3))")
        first.crash()
        let second = try ServerProcess(directory: first.directory, port: first.port, extraArguments: grace)
        defer { second.stop() }
        // Back after the restart, the listener's snapshot says the room is ending, at the same time.
        let back = eliEvents.wait {
            if case .reconnected(let message) = $0, case .joined = message.event { return true }
            return false
        }
        guard case .reconnected(let message)? = back, case .joined(let snapshot) = message.event else {
            Issue.record("eli is not back: \(eliEvents.all.suffix(3))")
            return
        }
        #expect(snapshot.ending == HostlessEnding(host: "ana", name: "Ana", at: endsAt))
        // And it ends then, for the reason everyone is told.
        let ended = eliEvents.wait(timeout: 20) {
            if case .message(let message) = $0, case .roomEnded(_, let reason) = message.event {
                return reason == Self.reason
            }
            return false
        }
        #expect(ended != nil, "the room did not end: \(eliEvents.all.suffix(3))")
        second.stop()
        let database = try RoomDatabase(path: second.dataDirectory + "/" + RoomDatabase.fileName)
        defer { database.close() }
        let room = try database.room("lobby")
        #expect(room?.endedReason == Self.reason)
        #expect((room?.endedAt ?? 0) >= endsAt, "ended before the announced time")
        #expect(try database.roomsWithDeadlines() == [])
    }

    @Test(.timeLimit(.minutes(2))) func aRoomWhoseEndPassedWhileTheServerWasDownEndsWhenItStarts() throws {
        let grace = ["--hostless-grace", "1"]
        let first = try ServerProcess(extraArguments: grace)
        defer { first.stopAndClean() }
        let (ana, _) = try joinedSession(first, "ana", role: "host", name: "Ana")
        defer { ana.shutdown() }
        let (eli, eliEvents) = try joinedSession(first, "eli", role: "audience", name: "Eli")
        _ = ana.send(.leave)
        _ = eliEvents.wait { _ in ending(in: eliEvents) != nil }
        let endsAt = try #require(ending(in: eliEvents), "no room_ending: \(eliEvents.all.suffix(3))")
        // Killed before its end, with nobody coming back afterwards.
        first.crash()
        eli.shutdown()
        while Int64(Date().timeIntervalSince1970 * 1000) <= endsAt { usleep(50_000) }
        let second = try ServerProcess(directory: first.directory, port: first.port, extraArguments: grace)
        defer { second.stop() }
        let ended = second.log.wait(timeout: 10) { $0.contains("room lobby loaded") }
        #expect(ended != nil, "the room was not loaded at start: \(second.log.all)")
        #expect(second.logLines(containing: "rooms waiting for a host when the server stopped").count == 1)
        var endedReason: String?
        for _ in 0..<200 where endedReason == nil {
            usleep(50_000)
            let database = try RoomDatabase(path: second.dataDirectory + "/" + RoomDatabase.fileName)
            endedReason = try database.room("lobby")?.endedReason
            database.close()
        }
        #expect(endedReason == Self.reason)
    }
}
