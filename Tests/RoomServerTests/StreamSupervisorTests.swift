import Dispatch
import Foundation
import RoomCore
import RoomTesting
import Testing

@testable import RoomServer

/// The stream supervisor's children, on a clock of its own: one per room and destination, the address in a 0600
/// file and never in the arguments, started again when it dies, given up (the room told why) when it keeps
/// failing at once, and one destination's failures never touch another's child.
@Suite(.ownThread) struct StreamSupervisorTests {
    final class Harness: @unchecked Sendable {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("streams-\(UUID().uuidString)")
            .path
        let queue = DispatchQueue(label: "loop")
        private let lock = NSLock()
        private var clock: Timestamp = 1_796_000_000_000
        private var delays: [Duration] = []
        private var given: [String] = []
        var supervisor: StreamSupervisor!

        var pauses: [Duration] { lock.withLock { delays } }
        var gaveUp: [String] { lock.withLock { given } }

        init(script: String, step: Timestamp) throws {
            let path = folder + ".sh"
            try writeScript("#!/bin/sh\n" + script + "\n", to: path)
            let queue = queue
            supervisor = StreamSupervisor(
                folder: folder, launch: .init(executable: path, arguments: ["record"]),
                streams: [
                    ServerStream(name: "radio", url: "icecast://source:hush@127.0.0.1:8000/r.opus"),
                    ServerStream(name: "tv", url: "hls:/srv/tv"),
                ], log: ServerLog(minimum: .error),
                link: { room, stream in "ws://127.0.0.1:1/rooms/\(room)#invite=\(stream)" },
                gaveUp: { [unowned self] room, stream, reason in
                    lock.withLock { given.append("\(room) \(stream): \(reason)") }
                },
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

        /// Each start's arguments, then the destination file's mode and content, as the child saw them.
        func attempts(_ stream: String) -> [String] {
            let text = (try? String(contentsOfFile: folder + "/attempts-" + stream, encoding: .utf8)) ?? ""
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

        func order(_ orders: [StreamOrder], in room: String = "jazz") {
            var outcome = Outcome()
            outcome.streamOrders = orders
            queue.sync { supervisor.consume(outcome, in: room) }
        }
    }

    /// The stand-in notes its arguments, its destination file's mode and content, then runs as long as `rest` says.
    static func script(_ rest: String) -> String {
        #"name=$(sed 's/=.*//' "$5"); out="$(dirname "$5")/attempts-$name"; "#
            + #"echo "$*" >> "$out"; stat -c %a "$5" >> "$out"; cat "$5" >> "$out""# + "\n" + rest
    }

    @Test(.timeLimit(.minutes(1))) func eachDestinationHasAChildThatReadsItsAddressFromAPrivateFile() throws {
        let harness = try Harness(script: Self.script("sleep 30"), step: 10)
        defer { try? FileManager.default.removeItem(atPath: harness.folder) }
        harness.order([.start("radio", by: "ana"), .start("tv", by: "ana")])
        #expect(harness.waitFor { harness.attempts("radio").count == 3 && harness.attempts("tv").count == 3 })
        let radio = harness.attempts("radio")
        #expect(
            radio == [
                "record --link-file \(harness.folder)/jazz-radio.link --destination-file "
                    + "\(harness.folder)/jazz-radio.destination --started-by ana",
                "600", "radio=icecast://source:hush@127.0.0.1:8000/r.opus",
            ])
        #expect(harness.attempts("tv").last == "tv=hls:/srv/tv")
        harness.queue.sync { #expect(harness.supervisor.runs.count == 2) }
        harness.order([.stop("radio", by: "ana")])
        #expect(harness.waitFor { !FileManager.default.fileExists(atPath: harness.folder + "/jazz-radio.destination") })
        harness.queue.sync { #expect(harness.supervisor.runs.map(\.key.stream) == ["tv"]) }
        harness.order([.stopAll])
        #expect(harness.waitFor { harness.queue.sync { harness.supervisor.runs.isEmpty } })
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/jazz-tv.link"))
        #expect(harness.gaveUp.isEmpty)
    }

    @Test(.timeLimit(.minutes(1))) func aChildThatKeepsFailingAtOnceIsGivenUpAndTheOtherGoesOn() throws {
        // radio fails at once; tv runs.
        let harness = try Harness(
            script: Self.script(#"case "$5" in *radio*) exit 3;; esac; sleep 30"#), step: 1)
        defer { try? FileManager.default.removeItem(atPath: harness.folder) }
        harness.order([.start("tv", by: "ana"), .start("radio", by: "ana")])
        #expect(harness.waitFor { !harness.gaveUp.isEmpty })
        #expect(harness.gaveUp == ["jazz radio: its recorder keeps failing at once (it exited with status 3)"])
        #expect(harness.attempts("radio").count == 3 * RecorderSupervisor.maxQuickFailures)
        #expect(harness.pauses == [.seconds(1), .seconds(2)])
        #expect(harness.attempts("tv").count == 3)
        harness.queue.sync { #expect(harness.supervisor.runs.map(\.key.stream) == ["tv"]) }
        harness.order([.stopAll])
        #expect(harness.waitFor { harness.queue.sync { harness.supervisor.runs.isEmpty } })
    }

    @Test(.timeLimit(.minutes(1))) func aChildThatDiesAfterALongRunIsStartedAgain() throws {
        let harness = try Harness(script: Self.script("exit 1"), step: 10_000)
        defer { try? FileManager.default.removeItem(atPath: harness.folder) }
        harness.order([.start("tv", by: "ana")])
        #expect(harness.waitFor { harness.attempts("tv").count >= 9 })
        harness.order([.stop("tv", by: "ana")])
        #expect(harness.pauses.prefix(2) == [.seconds(1), .seconds(1)])
        #expect(harness.gaveUp.isEmpty)
    }
}
