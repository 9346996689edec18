import AudioCore
import Foundation
import RoomTesting
import Testing

@testable import RoomRecorder

/// A loopback port that takes connections (the kernel's backlog) and never answers: a server that went away
/// mid-handshake, or one not yet serving.
private func silentListener() throws -> (descriptor: Int32, port: Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
            bind(descriptor, pointer, length) == 0 && listen(descriptor, 8) == 0
                && getsockname(descriptor, pointer, &length) == 0
        }
    }
    #expect(bound)
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}

/// Runs `recorder` on a thread of its own; the outcome, once it has one.
private final class RecorderRun: @unchecked Sendable {
    private let lock = NSLock()
    private var result: RecordingOutcome?
    init(_ recorder: RoomRecorder) {
        Thread.detachNewThread { [self] in
            let outcome = recorder.run()
            lock.withLock { result = outcome }
        }
    }
    var outcome: RecordingOutcome? { lock.withLock { result } }
}

@Suite(.ownThread) struct RoomRecorderTests {
    private func recorder(port: Int, folder: TemporaryDirectory) -> RoomRecorder {
        RoomRecorder(
            settings: RoomRecorder.Settings(
                url: "ws://127.0.0.1:\(port)/rooms/jazz", token: "t", audioPath: folder.file("jazz.opus")),
            log: { _ in })
    }

    @Test(.timeLimit(.minutes(1))) func aStopBeforeJoiningEndsTheRunAtOnceAndWritesNothing() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (listener, port) = try silentListener()
        defer { close(listener) }
        let recorder = recorder(port: port, folder: folder)
        let run = RecorderRun(recorder)
        usleep(200_000)
        #expect(run.outcome == nil)
        recorder.stop()
        #expect(waitUntil(limit: 5) { run.outcome != nil })
        #expect(run.outcome == RoomRecorder.stoppedBeforeJoining)
        #expect(!FileManager.default.fileExists(atPath: folder.file("jazz.opus")))
        #expect(!FileManager.default.fileExists(atPath: folder.file("jazz.json")))
    }

    @Test(.timeLimit(.minutes(1))) func aStopBeforeTheRunNeverConnects() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (listener, port) = try silentListener()
        defer { close(listener) }
        let recorder = recorder(port: port, folder: folder)
        recorder.stop()
        #expect(recorder.run() == RoomRecorder.stoppedBeforeJoining)
        // Nothing connected: the listener has no connection waiting.
        let flags = fcntl(listener, F_GETFL)
        _ = fcntl(listener, F_SETFL, flags | O_NONBLOCK)
        #expect(accept(listener, nil, nil) == -1)
    }

    @Test func stampedFramesGoIntoTheRingWholeOrNotAtAll() {
        let ring = SampleRing(capacity: RoomRecorder.stampedFrame * 2 + 100)
        let frame = [Int16](repeating: 7, count: AudioFormat.samplesPerFrame)
        for time in [Int64(1), 2, 3] {
            frame.withUnsafeBufferPointer { RoomRecorder.push($0, at: time, into: ring) }
        }
        #expect(ring.availableToRead == RoomRecorder.stampedFrame * 2)
        var read = [Int16](repeating: 0, count: RoomRecorder.stampedFrame)
        _ = read.withUnsafeMutableBufferPointer { ring.read(into: $0) }
        #expect(Array(read[0..<4]) == [1, 0, 0, 0])
        #expect(Array(read[4...]) == frame)
        RoomRecorder.dropStamped(from: ring)
        #expect(ring.availableToRead == 0)
    }

    @Test func aStampThatIsNotOneNeitherTrapsNorAddsMoreSilenceThanPassed() {
        let start: Int64 = 5_000_000
        let now = start + 60_000_000
        #expect(RoomRecorder.slot(stamp: start + 40_000, start: start, now: now) == 2)
        #expect(RoomRecorder.slot(stamp: start + 29_000, start: start, now: now) == 1)
        #expect(RoomRecorder.slot(stamp: start - 1_000, start: start, now: now) == 0)
        #expect(RoomRecorder.slot(stamp: .max, start: start, now: now) == 3_000)
        #expect(RoomRecorder.slot(stamp: .min, start: start, now: now) == 0)
        #expect(RoomRecorder.slot(stamp: -1, start: .max, now: .min) == 0)
        #expect(RoomRecorder.slot(stamp: .max, start: .min, now: .max) == (Int64.max - 20_000 + 10_000) / 20_000)
    }
}
