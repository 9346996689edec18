import Dispatch
import RoomTesting
import Synchronization
import Testing

@testable import StreamOutputs

/// A sink the test drives: it fails to open as told, and each send can be held until released.
final class ScriptedSink: StreamSink, @unchecked Sendable {
    let script: Script
    init(_ script: Script) { self.script = script }

    final class Script: Sendable {
        let openFailures = Mutex<[StreamError]>([])
        let received = Mutex<[Int16]>([])
        let holdSends = Atomic<Bool>(false)
        let release = DispatchSemaphore(value: 0)
        let opens = Atomic<Int>(0)
        let finishes = Atomic<Int>(0)
    }

    func open() throws(StreamError) {
        script.opens.add(1, ordering: .relaxed)
        if let failure = script.openFailures.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw failure }
    }

    func send(_ frame: [Int16]) throws(StreamError) {
        script.received.withLock { $0.append(frame[0]) }
        if script.holdSends.load(ordering: .acquiring) { script.release.wait() }
    }

    func finish() { script.finishes.add(1, ordering: .relaxed) }
}

private func frame(_ id: Int16) -> [Int16] { [Int16](repeating: id, count: 960) }

@Suite struct LiveOutputTests {
    /// A destination that stalls never holds the mix up: the queue keeps the newest 250 frames and counts the rest.
    @Test func aStalledDestinationDropsTheOldestFramesAndCountsThem() throws {
        let script = ScriptedSink.Script()
        script.holdSends.store(true, ordering: .releasing)
        let log = ReportLog()
        let output = LiveOutput(name: "radio", makeSink: { _ in ScriptedSink(script) }, report: log.record)
        #expect(waitUntil(limit: 10) { log.last("radio") == .live })
        try output.write(frame(0), offset: 0)
        // The sink now holds frame 0; 260 more arrive while it is stalled.
        #expect(waitUntil(limit: 10) { script.received.withLock { $0 } == [0] })
        for id in 1...260 { try output.write(frame(Int16(id)), offset: Int64(id) * 20) }
        #expect(output.droppedFrames == 10)
        script.holdSends.store(false, ordering: .releasing)
        script.release.signal()
        try output.close()
        #expect(script.received.withLock { $0 } == [0] + (11...260).map { Int16($0) })
        #expect(
            log.of("radio").last?.sentence
                == "Streaming to radio ended; 10 frames (0.2 s) were dropped while it could not keep up.")
    }

    /// The same refusal, however often, is said once; the stream starting is said once.
    @Test func repeatedFailuresAreReportedOncePerChangeOfState() throws {
        let script = ScriptedSink.Script()
        script.openFailures.withLock { $0 = Array(repeating: .passwordRefused, count: 4) }
        let log = ReportLog()
        let output = LiveOutput(
            name: "radio", backoff: StreamBackoff(first: .milliseconds(1), longest: .milliseconds(2)),
            makeSink: { _ in ScriptedSink(script) }, report: log.record)
        #expect(waitUntil(limit: 10) { log.last("radio") == .live })
        try output.close()
        #expect(script.opens.load(ordering: .relaxed) == 5)
        #expect(script.finishes.load(ordering: .relaxed) == 5)
        #expect(
            log.of("radio").map(\.sentence) == [
                "Streaming to radio stopped: the server refused the password.",
                "Streaming to radio started.",
                "Streaming to radio ended.",
            ])
    }

    /// An outage is one report whether the server dropped the stream or does not answer; a new kind of
    /// refusal while it is tried again is a new report.
    @Test func aNewKindOfTroubleIsReportedButTheSameOutageIsNot() throws {
        let script = ScriptedSink.Script()
        script.openFailures.withLock {
            $0 = [.dropped(detail: "Broken pipe"), .unreachable(detail: "Connection refused"), .passwordRefused]
        }
        let log = ReportLog()
        let output = LiveOutput(
            name: "radio", backoff: StreamBackoff(first: .milliseconds(1), longest: .milliseconds(2)),
            makeSink: { _ in ScriptedSink(script) }, report: log.record)
        #expect(waitUntil(limit: 10) { log.last("radio") == .live })
        try output.close()
        #expect(
            log.of("radio").map(\.sentence) == [
                "Streaming to radio stopped: the connection was lost (Broken pipe).",
                "Streaming to radio stopped: the server refused the password.",
                "Streaming to radio started.",
                "Streaming to radio ended.",
            ])
    }

    /// Frames written while the destination is down are not queued for later: the stream resumes live.
    @Test func framesWhileTheDestinationIsDownAreCountedNotQueued() throws {
        let script = ScriptedSink.Script()
        script.openFailures.withLock { $0 = [.unreachable(detail: "Connection refused")] }
        let log = ReportLog()
        let output = LiveOutput(
            name: "radio", backoff: StreamBackoff(first: .seconds(60), longest: .seconds(60)),
            makeSink: { _ in ScriptedSink(script) }, report: log.record)
        #expect(waitUntil(limit: 10) { log.last("radio") != nil })
        for id in 0..<5 { try output.write(frame(Int16(id)), offset: Int64(id) * 20) }
        #expect(output.framesNotSentWhileDown == 5)
        // Closing cuts the minute's wait short.
        try output.close()
        #expect(script.received.withLock { $0 } == [])
        #expect(log.of("radio").map(\.state) == [.retrying(.unreachable(detail: "Connection refused")), .closed])
    }

    /// Retries start at half a second and double to at most 4 s, so a returning destination waits at most 4 s.
    @Test func theBackoffDoublesToFourSeconds() {
        let delays = (1...7).map { StreamBackoff.standard.delay(afterFailures: $0) }
        #expect(
            delays == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4), .seconds(4), .seconds(4),
            ])
    }
}

@Suite struct StreamDestinationTests {
    @Test func anIcecastAddressIsReadWholeAndNamedWithoutItsPassword() throws {
        let destination = try StreamDestination.icecast("icecast://source:p%40ss@radio.example.org:8010/room.opus")
        #expect(
            destination
                == .icecast(
                    IcecastAddress(
                        host: "radio.example.org", port: 8010, user: "source", password: "p@ss", mount: "/room.opus")))
        #expect(destination.name == "radio.example.org:8010/room.opus")
        #expect(try StreamDestination.icecast("icecast://source:pw@host/m.opus").name == "host:8000/m.opus")
    }

    @Test func badIcecastAddressesSayWhatIsWrong() {
        let cases: [(String, String)] = [
            ("http://source:pw@host:8000/m.opus", "an Icecast address cannot be used: it must start with icecast://"),
            (
                "icecast://host:8000/m.opus",
                "an Icecast address cannot be used: it needs the source's user and password "
                    + "(icecast://USER:PASSWORD@HOST:PORT/MOUNT)"
            ),
            (
                "icecast://source:pw@host:80000/m.opus",
                "host:80000 cannot be used: the port must be a number from 1 to 65535"
            ),
            ("icecast://source:pw@host:8000", "host:8000 cannot be used: it needs a mount (HOST:PORT/MOUNT.opus)"),
            (
                "icecast://source:@host:8000/m",
                "host:8000/m cannot be used: the user and the password must not be empty"
            ),
        ]
        for (text, reason) in cases {
            #expect(throws: StreamError.self) { try StreamDestination.icecast(text) }
            do {
                _ = try StreamDestination.icecast(text)
            } catch {
                #expect(error.reason == reason, "\(text)")
            }
        }
    }

    @Test func anRTMPAddressKeepsItsKeyOutOfItsName() throws {
        let destination = try StreamDestination.rtmp("rtmp://live.example.org/app/sk_12345")
        #expect(destination == .rtmp(url: "rtmp://live.example.org/app/sk_12345"))
        #expect(destination.name == "rtmp://live.example.org/app")
        #expect(throws: StreamError.self) { try StreamDestination.rtmp("rtmp://live.example.org/app") }
        #expect(throws: StreamError.self) { try StreamDestination.rtmp("http://live.example.org/app/key") }
    }
}
