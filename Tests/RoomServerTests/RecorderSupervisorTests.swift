import Foundation
import RoomCore
import RoomTesting
import Testing

@testable import RoomServer

/// The supervisor's restarts, on a clock of its own: a recorder that dies while the recording should go on is
/// started again into a new file, after pauses that double while it keeps failing at once.
@Suite(.ownThread) struct RecorderSupervisorTests {
    typealias Harness = SupervisorHarness<Recordings>

    /// A supervisor of recorders whose program is `script`; `before` sees the folder before it starts.
    func harness(script: String, step: Timestamp, before: (String) throws -> Void = { _ in }) throws -> Harness {
        try Harness("recorders", script: script, step: step, before: before) { folder, program, tell in
            Recordings(
                folder: folder, launch: .init(executable: program, arguments: []),
                link: { "ws://127.0.0.1:1/rooms/\($0)#invite=x" }, tell: { _, sentence in tell(sentence) })
        }
    }

    let note = #"echo "$4" >> "$(dirname "$4")/attempts""#

    @Test(.timeLimit(.minutes(1))) func aRecorderThatDiesIsStartedAgainIntoANewFile() throws {
        let harness = try harness(script: note, step: 10_000)
        defer { harness.remove() }
        var start = Outcome()
        start.recorderOrders = [.start(by: "ana")]
        harness.consume(start)
        #expect(harness.waitFor { harness.lines("attempts").count >= 3 })
        var stop = Outcome()
        stop.recorderOrders = [.stop(by: "ana")]
        harness.consume(stop)
        let files = harness.lines("attempts")
        #expect(Set(files).count == files.count, "a restart wrote over an earlier file: \(files)")
        #expect(files.allSatisfy { $0.hasPrefix(harness.folder + "/jazz-") && $0.hasSuffix("Z.opus") })
        // Long runs are not failures at once: every pause is the first one.
        #expect(harness.pauses.prefix(2) == [.seconds(1), .seconds(1)])
        #expect(harness.told.isEmpty)
    }

    @Test(.timeLimit(.minutes(1))) func pausesDoubleWhileItFailsAtOnceAndThenItIsGivenUp() throws {
        let harness = try harness(script: note + "\nexit 3", step: 1)
        defer { harness.remove() }
        var start = Outcome()
        start.recorderOrders = [.start(by: "ana")]
        harness.consume(start)
        #expect(harness.waitFor { !harness.told.isEmpty })
        #expect(harness.lines("attempts").count == Children.maxQuickFailures)
        #expect(harness.pauses == [.seconds(1), .seconds(2)])
        #expect(
            harness.told
                == ["The recorder keeps failing at once (it exited with status 3); the recording stopped."])
        harness.queue.sync { #expect(harness.supervisor.runs.isEmpty) }
    }

    /// The state letter `/proc` gives `pid` ("Z" for a child that ended and is not reaped), nil when no such
    /// process is left.
    func state(of pid: pid_t) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.range(of: ") ", options: .backwards)
        else { return nil }
        return String(text[close.upperBound...].prefix(1))
    }

    /// A child that ended stays the server's (not reaped) until the loop has forgotten its pid, so a stop handled
    /// in between signals that ended child, never a process that took its number over since.
    @Test(.timeLimit(.minutes(1))) func anEndedChildIsReapedOnlyAfterTheLoopForgetsItsPid() throws {
        let harness = try harness(script: note + "\nexit 0", step: 10_000)
        defer { harness.remove() }
        var start = Outcome()
        start.recorderOrders = [.start(by: "ana")]
        // The loop is busy elsewhere from the start on, while the child ends.
        let started = harness.queue.sync {
            harness.supervisor.consume(start, in: "jazz")
            harness.queue.suspend()
            return harness.supervisor.runs["jazz"]?.pid
        }
        guard let pid = started else {
            harness.queue.resume()
            Issue.record("no recorder ran")
            return
        }
        #expect(harness.waitFor { state(of: pid) == "Z" || state(of: pid) == nil })
        #expect(!waitUntil(limit: 1, every: 0.02) { state(of: pid) == nil }, "reaped while the loop still held it")
        #expect(state(of: pid) == "Z")
        harness.queue.resume()
        #expect(harness.waitFor { state(of: pid) == nil })
        var stop = Outcome()
        stop.recorderOrders = [.stop(by: "ana")]
        harness.consume(stop)
        harness.queue.sync { #expect(harness.supervisor.runs["jazz"]?.pid != pid) }
    }

    func contents(of folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    @Test(.timeLimit(.minutes(1))) func theServerStopLeavesNoLinkBehindAndAStartClearsACrashedOnes() throws {
        let harness = try harness(script: note + "\nexec sleep 30", step: 10_000) { folder in
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try "ws://x#invite=old\n".write(toFile: folder + "/jazz-old.link", atomically: false, encoding: .utf8)
            try "".write(toFile: folder + "/jazz-old.opus", atomically: false, encoding: .utf8)
        }
        defer { harness.remove() }
        #expect(contents(of: harness.folder) == ["jazz-old.opus"])
        var start = Outcome()
        start.recorderOrders = [.start(by: "ana")]
        harness.consume(start)
        #expect(harness.waitFor { harness.lines("attempts").count == 1 })
        #expect(contents(of: harness.folder).filter { $0.hasSuffix(".link") }.count == 1)
        // The loop stops with the server: nothing it would run later removes the link.
        let left = harness.queue.sync {
            harness.supervisor.stopAll()
            return contents(of: harness.folder).filter { $0.hasSuffix(".link") }
        }
        #expect(left == [])
    }

    @Test(.timeLimit(.minutes(1))) func aStartWhileTheLastRecorderClosesIsCarriedOutIntoAFreeName() throws {
        // Same second at every reading; the recorder writes its file and takes a while to close it.
        let script = note + "\n: > \"$4\"\ntrap 'sleep 0.3; exit 0' TERM\nwhile :; do sleep 0.05; done"
        let harness = try harness(script: script, step: 0)
        defer { harness.remove() }
        var start = Outcome()
        start.recorderOrders = [.start(by: "ana")]
        var stop = Outcome()
        stop.recorderOrders = [.stop(by: "ana")]
        harness.consume(start)
        #expect(harness.waitFor { harness.lines("attempts").count == 1 })
        harness.queue.sync {
            harness.supervisor.consume(stop, in: "jazz")
            harness.supervisor.consume(start, in: "jazz")
            #expect(harness.supervisor.pendingStarts == ["jazz": "ana"])
        }
        #expect(harness.waitFor { harness.lines("attempts").count == 2 })
        harness.consume(stop)
        let first = harness.folder + "/jazz-" + Recordings.stamp(1_796_000_000_000)
        #expect(harness.lines("attempts") == [first + ".opus", first + "-2.opus"])
        #expect(harness.told.isEmpty)
    }

    @Test(.timeLimit(.minutes(1))) func theLinkAndItsFolderAreTheServersAlone() throws {
        let modes = #"stat -c %a "$2" "$(dirname "$2")" >> "$(dirname "$2")/modes""#
        let harness = try harness(script: modes + "\n" + note, step: 10_000) { folder in
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        defer { harness.remove() }
        var start = Outcome()
        start.recorderOrders = [.start(by: "ana")]
        harness.consume(start)
        #expect(harness.waitFor { !harness.lines("attempts").isEmpty }, "told: \(harness.told)")
        var stop = Outcome()
        stop.recorderOrders = [.stop(by: "ana")]
        harness.consume(stop)
        let seen = (try? String(contentsOfFile: harness.folder + "/modes", encoding: .utf8)) ?? ""
        #expect(seen.split(separator: "\n").prefix(2) == ["600", "700"])
        // A link is never written over: its file is new or the write fails.
        let path = harness.folder + "/taken.link"
        try Children.writePrivately("a\n", to: path)
        #expect(throws: (any Error).self) { try Children.writePrivately("b\n", to: path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "a\n")
    }

    @Test func ownRecordIsTheRunningProgramWhereverItsFileWent() {
        #expect(ChildLaunch.ownRecord?.executable == "/proc/self/exe")
        #expect(ChildLaunch.ownRecord?.arguments == ["record"])
    }

    @Test func namesAndEndsReadAsPeopleReadThem() {
        #expect(Recordings.stamp(1_796_000_000_000) == "20261130T005320Z")
        #expect(Children.describe(1 << 8) == "exited with status 1")
        #expect(Children.describe(9) == "was killed by signal 9")
    }
}
