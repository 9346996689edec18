import Dispatch
import Foundation
import RoomCore
import RoomTesting
import Testing

@testable import RoomServer

/// The supervisor's restarts, on a clock of its own: a recorder that dies while the recording should go on is
/// started again into a new file, after pauses that double while it keeps failing at once.
@Suite(.ownThread) struct RecorderSupervisorTests {
    final class Harness: @unchecked Sendable {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("recorders-\(UUID().uuidString)")
            .path
        let queue = DispatchQueue(label: "loop")
        private let lock = NSLock()
        private var clock: Timestamp = 1_796_000_000_000
        private var delays: [Duration] = []
        private var sentences: [String] = []
        var supervisor: RecorderSupervisor!

        var pauses: [Duration] { lock.withLock { delays } }
        var told: [String] { lock.withLock { sentences } }

        /// `step` is how far the clock moves at each reading: past `quickFailure`, every run counts as a long one.
        /// `before` sees the folder before the supervisor starts.
        init(script: String, step: Timestamp, before: (String) throws -> Void = { _ in }) throws {
            try before(folder)
            let path = folder + ".sh"
            try writeScript("#!/bin/sh\n" + script + "\n", to: path)
            let queue = queue
            supervisor = RecorderSupervisor(
                folder: folder, launch: .init(executable: path, arguments: []), log: ServerLog(minimum: .error),
                link: { "ws://127.0.0.1:1/rooms/\($0)#invite=x" },
                tell: { [unowned self] _, sentence in lock.withLock { sentences.append(sentence) } },
                execute: { task in queue.async(execute: task) },
                schedule: { [unowned self] delay, task in
                    lock.withLock { delays.append(delay) }
                    queue.async(execute: task)
                },
                clock: { [unowned self] in
                    lock.withLock {
                        clock += step
                        return clock
                    }
                })
        }

        func attempts() -> [String] {
            let text = (try? String(contentsOfFile: folder + "/attempts", encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init)
        }

        func waitFor(_ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline {
                if condition() { return true }
                usleep(20_000)
            }
            return false
        }
    }

    let note = #"echo "$4" >> "$(dirname "$4")/attempts""#

    @Test(.timeLimit(.minutes(1))) func aRecorderThatDiesIsStartedAgainIntoANewFile() throws {
        let harness = try Harness(script: note, step: 10_000)
        defer { try? FileManager.default.removeItem(atPath: harness.folder) }
        var start = Outcome()
        start.recorderOrders = [.start(by: "ana")]
        harness.queue.sync { harness.supervisor.consume(start, in: "jazz") }
        #expect(harness.waitFor { harness.attempts().count >= 3 })
        var stop = Outcome()
        stop.recorderOrders = [.stop(by: "ana")]
        harness.queue.sync { harness.supervisor.consume(stop, in: "jazz") }
        let files = harness.attempts()
        #expect(Set(files).count == files.count, "a restart wrote over an earlier file: \(files)")
        #expect(files.allSatisfy { $0.hasPrefix(harness.folder + "/jazz-") && $0.hasSuffix("Z.opus") })
        // Long runs are not failures at once: every pause is the first one.
        #expect(harness.pauses.prefix(2) == [.seconds(1), .seconds(1)])
        #expect(harness.told.isEmpty)
    }

    @Test(.timeLimit(.minutes(1))) func pausesDoubleWhileItFailsAtOnceAndThenItIsGivenUp() throws {
        let harness = try Harness(script: note + "\nexit 3", step: 1)
        defer { try? FileManager.default.removeItem(atPath: harness.folder) }
        var start = Outcome()
        start.recorderOrders = [.start(by: "ana")]
        harness.queue.sync { harness.supervisor.consume(start, in: "jazz") }
        #expect(harness.waitFor { !harness.told.isEmpty })
        #expect(harness.attempts().count == RecorderSupervisor.maxQuickFailures)
        #expect(harness.pauses == [.seconds(1), .seconds(2)])
        #expect(
            harness.told
                == ["The recorder keeps failing at once (it exited with status 3); the recording stopped."])
        harness.queue.sync { #expect(harness.supervisor.runs.isEmpty) }
    }

    func contents(of folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    @Test(.timeLimit(.minutes(1))) func theServerStopLeavesNoLinkBehindAndAStartClearsACrashedOnes() throws {
        let harness = try Harness(script: note + "\nexec sleep 30", step: 10_000) { folder in
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try "ws://x#invite=old\n".write(toFile: folder + "/jazz-old.link", atomically: false, encoding: .utf8)
            try "".write(toFile: folder + "/jazz-old.opus", atomically: false, encoding: .utf8)
        }
        defer { try? FileManager.default.removeItem(atPath: harness.folder) }
        #expect(contents(of: harness.folder) == ["jazz-old.opus"])
        var start = Outcome()
        start.recorderOrders = [.start(by: "ana")]
        harness.queue.sync { harness.supervisor.consume(start, in: "jazz") }
        #expect(harness.waitFor { harness.attempts().count == 1 })
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
        let harness = try Harness(script: script, step: 0)
        defer { try? FileManager.default.removeItem(atPath: harness.folder) }
        var start = Outcome()
        start.recorderOrders = [.start(by: "ana")]
        var stop = Outcome()
        stop.recorderOrders = [.stop(by: "ana")]
        harness.queue.sync { harness.supervisor.consume(start, in: "jazz") }
        #expect(harness.waitFor { harness.attempts().count == 1 })
        harness.queue.sync {
            harness.supervisor.consume(stop, in: "jazz")
            harness.supervisor.consume(start, in: "jazz")
            #expect(harness.supervisor.pendingStarts == ["jazz": "ana"])
        }
        #expect(harness.waitFor { harness.attempts().count == 2 })
        harness.queue.sync { harness.supervisor.consume(stop, in: "jazz") }
        let first = harness.folder + "/jazz-" + RecorderSupervisor.stamp(1_796_000_000_000)
        #expect(harness.attempts() == [first + ".opus", first + "-2.opus"])
        #expect(harness.told.isEmpty)
    }

    @Test(.timeLimit(.minutes(1))) func theLinkAndItsFolderAreTheServersAlone() throws {
        let modes = #"stat -c %a "$2" "$(dirname "$2")" >> "$(dirname "$2")/modes""#
        let harness = try Harness(script: modes + "\n" + note, step: 10_000) { folder in
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        defer { try? FileManager.default.removeItem(atPath: harness.folder) }
        var start = Outcome()
        start.recorderOrders = [.start(by: "ana")]
        harness.queue.sync { harness.supervisor.consume(start, in: "jazz") }
        #expect(harness.waitFor { !harness.attempts().isEmpty }, "told: \(harness.told)")
        var stop = Outcome()
        stop.recorderOrders = [.stop(by: "ana")]
        harness.queue.sync { harness.supervisor.consume(stop, in: "jazz") }
        let seen = (try? String(contentsOfFile: harness.folder + "/modes", encoding: .utf8)) ?? ""
        #expect(seen.split(separator: "\n").prefix(2) == ["600", "700"])
        // A link is never written over: its file is new or the write fails.
        let path = harness.folder + "/taken.link"
        try RecorderSupervisor.writePrivately("a\n", to: path)
        #expect(throws: (any Error).self) { try RecorderSupervisor.writePrivately("b\n", to: path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "a\n")
    }

    @Test func ownRecordIsTheRunningProgramWhereverItsFileWent() {
        #expect(RecorderSupervisor.Launch.ownRecord?.executable == "/proc/self/exe")
        #expect(RecorderSupervisor.Launch.ownRecord?.arguments == ["record"])
    }

    @Test func namesAndEndsReadAsPeopleReadThem() {
        #expect(RecorderSupervisor.stamp(1_796_000_000_000) == "20261130T005320Z")
        #expect(RecorderSupervisor.describe(1 << 8) == "exited with status 1")
        #expect(RecorderSupervisor.describe(9) == "was killed by signal 9")
    }
}
