import Foundation
import RoomCore
import RoomTesting
import Testing

@testable import RoomServer

/// The stream supervisor's children, on a clock of its own: one per room and destination, the address in a 0600
/// file and never in the arguments, started again when it dies, given up (the room told why) when it keeps
/// failing at once, and one destination's failures never touch another's child.
@Suite(.ownThread) struct StreamSupervisorTests {
    typealias Harness = SupervisorHarness<Streams>

    /// A supervisor of the streams to `radio` (Icecast) and `tv` (HLS) whose program is `script`; what it gives up
    /// is told as "ROOM STREAM: REASON".
    func harness(script: String, step: Timestamp) throws -> Harness {
        try Harness("streams", script: script, step: step) { folder, program, tell in
            Streams(
                folder: folder, launch: .init(executable: program, arguments: ["record"]),
                streams: [
                    ServerStream(name: "radio", url: "icecast://source:hush@127.0.0.1:8000/r.opus"),
                    ServerStream(name: "tv", url: "hls:/srv/tv"),
                ],
                link: { room, stream in "ws://127.0.0.1:1/rooms/\(room)#invite=\(stream)" },
                gaveUp: { room, stream, reason in tell("\(room) \(stream): \(reason)") })
        }
    }

    /// The stand-in notes its arguments, its destination file's mode and content, then runs as long as `rest` says.
    static func script(_ rest: String) -> String {
        #"name=$(sed 's/=.*//' "$5"); out="$(dirname "$5")/attempts-$name"; "#
            + #"echo "$*" >> "$out"; stat -c %a "$5" >> "$out"; cat "$5" >> "$out""# + "\n" + rest
    }

    @Test(.timeLimit(.minutes(1))) func eachDestinationHasAChildThatReadsItsAddressFromAPrivateFile() throws {
        let harness = try harness(script: Self.script("sleep 30"), step: 10)
        defer { harness.remove() }
        harness.order([.start("radio", by: "ana"), .start("tv", by: "ana")])
        #expect(
            harness.waitFor { harness.lines("attempts-radio").count == 3 && harness.lines("attempts-tv").count == 3 })
        let radio = harness.lines("attempts-radio")
        #expect(
            radio == [
                "record --link-file \(harness.folder)/jazz-radio.link --destination-file "
                    + "\(harness.folder)/jazz-radio.destination --started-by ana",
                "600", "radio=icecast://source:hush@127.0.0.1:8000/r.opus",
            ])
        #expect(harness.lines("attempts-tv").last == "tv=hls:/srv/tv")
        harness.queue.sync { #expect(harness.supervisor.runs.count == 2) }
        harness.order([.stop("radio", by: "ana")])
        #expect(harness.waitFor { !FileManager.default.fileExists(atPath: harness.folder + "/jazz-radio.destination") })
        harness.queue.sync { #expect(harness.supervisor.runs.map(\.key.stream) == ["tv"]) }
        harness.order([.stopAll])
        #expect(harness.waitFor { harness.queue.sync { harness.supervisor.runs.isEmpty } })
        #expect(!FileManager.default.fileExists(atPath: harness.folder + "/jazz-tv.link"))
        #expect(harness.told.isEmpty)
    }

    @Test(.timeLimit(.minutes(1))) func aChildThatKeepsFailingAtOnceIsGivenUpAndTheOtherGoesOn() throws {
        // radio fails at once; tv runs.
        let harness = try harness(
            script: Self.script(#"case "$5" in *radio*) exit 3;; esac; sleep 30"#), step: 1)
        defer { harness.remove() }
        harness.order([.start("tv", by: "ana"), .start("radio", by: "ana")])
        #expect(harness.waitFor { !harness.told.isEmpty })
        #expect(harness.told == ["jazz radio: its recorder keeps failing at once (it exited with status 3)"])
        #expect(harness.lines("attempts-radio").count == 3 * Children.maxQuickFailures)
        #expect(harness.pauses == [.seconds(1), .seconds(2)])
        #expect(harness.lines("attempts-tv").count == 3)
        harness.queue.sync { #expect(harness.supervisor.runs.map(\.key.stream) == ["tv"]) }
        harness.order([.stopAll])
        #expect(harness.waitFor { harness.queue.sync { harness.supervisor.runs.isEmpty } })
    }

    @Test(.timeLimit(.minutes(1))) func aChildThatDiesAfterALongRunIsStartedAgain() throws {
        let harness = try harness(script: Self.script("exit 1"), step: 10_000)
        defer { harness.remove() }
        harness.order([.start("tv", by: "ana")])
        #expect(harness.waitFor { harness.lines("attempts-tv").count >= 9 })
        harness.order([.stop("tv", by: "ana")])
        #expect(harness.pauses.prefix(2) == [.seconds(1), .seconds(1)])
        #expect(harness.told.isEmpty)
    }
}

extension SupervisorHarness where Kind == Streams {
    /// Hands the room's stream orders to the supervisor.
    func order(_ orders: [StreamOrder], in room: String = "jazz") {
        var outcome = Outcome()
        outcome.streamOrders = orders
        consume(outcome, in: room)
    }
}
