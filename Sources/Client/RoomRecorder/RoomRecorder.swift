import AudioCodec
import AudioCore
import ClientAudio
import Dispatch
import Foundation
import Platform
import RoomClient
import RoomCore
import RoomProtocol
import RoomTransport
import StrictJSON
import Synchronization
import WebSocket

/// How a recording ended.
public enum RecordingOutcome: Sendable, Equatable {
    /// The file and its record were closed cleanly (`complete: true`): stopped, its time was up, or the room ended
    /// or let the recorder go. `milliseconds` of audio were kept.
    case finished(milliseconds: Int64, why: String)
    /// The recording could not go on: the sentence a person reads.
    case failed(String)
}

/// A recorder: a participant of the room (role `recorder`) that receives every speaker as a listener does
/// (`ClientMedia`: jitter buffers, decoders, the mixer), hands each 20 ms frame of the mix to its outputs (the
/// Ogg Opus file first, when there is one), silence included, and keeps the room's record beside the file.
///
/// Three threads: the session's (room events, into the record), the media thread (the mix, into a lock-free ring,
/// each frame stamped with its time in the same write, so the ring holds whole stamped frames; who is talking,
/// into an inbox), and the recorder's own, which paces the
/// timeline by the monotonic clock: it writes every frame the media made at its place, fills with silence where
/// none came (a reconnect, a stall), and rewrites the record every 2 s (temp file, then rename).
public final class RoomRecorder: Sendable {
    /// What a recorder is asked to do.
    public struct Settings: Sendable {
        public var url: String
        public var token: String
        public var headers: HTTPHeaders
        public var tls: TLSClientConfiguration
        /// The Ogg Opus file; the record goes beside it (`RecordingRecord.path(forAudio:)`). nil: neither is written,
        /// and the mix goes to `outputs` alone (a stream without a recording).
        public var audioPath: String?
        /// Stop after this much audio; nil: until stopped.
        public var seconds: Int?
        /// The outputs besides the file, such as live streams; they are closed with it.
        public var outputs: [@Sendable () throws -> any MixOutput]

        public init(
            url: String, token: String, headers: HTTPHeaders = HTTPHeaders(),
            tls: TLSClientConfiguration = TLSClientConfiguration(), audioPath: String?, seconds: Int? = nil,
            outputs: [@Sendable () throws -> any MixOutput] = []
        ) {
            self.url = url
            self.token = token
            self.headers = headers
            self.tls = tls
            self.audioPath = audioPath
            self.seconds = seconds
            self.outputs = outputs
        }

        public var recordPath: String? { audioPath.map { RecordingRecord.path(forAudio: $0) } }
    }

    /// How often the record is rewritten, in milliseconds of wall time.
    public static let recordInterval: Int64 = 2_000
    /// The longest a frame may be late before its place is taken by silence, in frames: the media thread catches
    /// up stalls shorter than 200 ms with a burst of frames, and starts afresh after longer ones.
    static let lateFrames: Int64 = 12
    /// A frame in the ring: four samples of its time (µs), then the frame.
    static let stampedFrame = 4 + AudioFormat.samplesPerFrame

    private let settings: Settings
    private let log: @Sendable (String) -> Void
    private let ring = SampleRing(capacity: (4 + AudioFormat.samplesPerFrame) * 250)
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// Signalled once the session has ended.
    private let sessionEnded = DispatchSemaphore(value: 0)
    private let media: ClientMediaSlot
    private let heardInbox = HeardInbox()

    /// Who is talking, as the media thread reports it, waiting for the recorder's thread.
    private final class HeardInbox: Sendable {
        let reports = Mutex<[(at: Int64, speakers: [HeardSpeaker])]>([])
    }

    private struct State: @unchecked Sendable {
        // @unchecked: the outputs are used by the recorder's thread alone once it runs.
        var session: RoomSession?
        var keeper: RecordKeeper?
        var startMicroseconds: Int64 = 0
        var talking: Set<PeerID> = []
        var stopRequested: String?
        /// Why the room let the recorder go, when it said: who stopped the recording, or that the room ended. It
        /// is the reason given at the end, even when a signal asked the recorder to stop first.
        var roomsWord: String?
        var failure: String?
        var outcome: RecordingOutcome?
        var ended = false
        var started = false
    }

    /// A recorder; nothing happens until ``run()``. `log` hears what it says as it goes (a line each).
    public init(settings: Settings, log: @escaping @Sendable (String) -> Void) {
        self.settings = settings
        self.log = log
        let ring = ring
        let inbox = heardInbox
        media = ClientMediaSlot(
            options: ClientMedia.Options(
                source: .none,
                output: AudioFeed(playback: { frame in
                    RoomRecorder.push(frame, at: MonotonicClock.microseconds(), into: ring)
                }), tracksTalkers: true, talkerLevels: false),
            onEvent: { event in
                guard case .heard(let speakers) = event else { return }
                let now = MonotonicClock.microseconds()
                inbox.reports.withLock { $0.append((now, speakers)) }
            },
            onFailure: { problem in log("clubroom record: \(problem)") })
    }

    /// The outcome of a stop that came before the recorder joined: nothing was recorded, and it never joins.
    public static let stoppedBeforeJoining = RecordingOutcome.failed(
        "The recorder was stopped before it joined the room; nothing was recorded.")

    /// Asks the recorder to finish: the file and the record are closed cleanly and it leaves. Any thread. Before
    /// it has joined, it leaves at once (a connection or a retry in progress is given up) and never joins:
    /// `run()` returns ``stoppedBeforeJoining``.
    public func stop(_ why: String = "it was stopped") {
        let (session, before) = state.withLock { state -> (RoomSession?, Bool) in
            if state.stopRequested == nil { state.stopRequested = why }
            return (state.session, !state.started)
        }
        wake.signal()
        guard before else { return }
        finish(Self.stoppedBeforeJoining)
        session?.leave()
    }

    /// Joins, records until stopped (or its time is up, or the room lets it go), and returns how it ended.
    public func run() -> RecordingOutcome {
        let session: RoomSession
        do {
            session = try RoomSession(
                url: settings.url, token: settings.token, headers: settings.headers, tls: settings.tls,
                reconnect: ReconnectPolicy(maximumAttempts: 30), media: { [media] in media.handle($0) }
            ) { [self] event in handle(event) }
        } catch {
            return .failed("Cannot connect to \(settings.url): \(error.description).")
        }
        let stopped = state.withLock { state -> Bool in
            state.session = session
            return state.stopRequested != nil
        }
        if !stopped {
            media.attach(session.mediaChannel)
            session.start()
        }
        done.wait()
        media.close()
        session.shutdown()
        return state.withLock { $0.outcome } ?? .failed("The recorder stopped before it could record.")
    }

    // MARK: The session's thread

    private func handle(_ event: SessionEvent) {
        switch event {
        case .message(let message), .reconnected(let message):
            if case .joined(let snapshot) = message.event {
                joined(snapshot)
                return
            }
            let offset = self.offset()
            let me = currentSelf
            for action in message.roomActions(selfID: me) {
                guard case .server(let event, _) = action else { continue }
                state.withLock { state in
                    switch event {
                    case .removed(let peer, _, let by?) where peer == me:
                        // Someone stopped the recording: it is this recorder that goes.
                        state.roomsWord = "it was stopped by \(state.keeper?.name(of: by) ?? by.rawValue)"
                    case .roomEnded: state.roomsWord = "the room ended"
                    default: break
                    }
                    state.keeper?.apply(event, at: offset)
                }
            }
        case .reconnecting(let attempt, _):
            log("clubroom record: the connection dropped; trying again (attempt \(attempt)); silence is kept meanwhile")
        case .ended(let end):
            let started = state.withLock { state -> Bool in
                state.ended = true
                if state.stopRequested == nil { state.stopRequested = Self.reason(for: end) }
                switch end {
                case .roomEnded: state.roomsWord = "the room ended"
                case .removed where state.roomsWord == nil: state.roomsWord = Self.reason(for: end)
                default: break
                }
                return state.started
            }
            if !started { finish(.failed(Self.sentence(for: end))) }
            wake.signal()
            sessionEnded.signal()
        }
    }

    private let selfSlot = Mutex<PeerID?>(nil)
    private var currentSelf: PeerID? { selfSlot.withLock { $0 } }

    /// The first snapshot starts the recording (the file with the room's tags, the record with the room as it is);
    /// a later one (after a reconnect) brings the record up to date.
    private func joined(_ snapshot: JoinedSnapshot) {
        selfSlot.withLock { $0 = snapshot.selfID }
        let peers = snapshot.peers.map(\.peer)
        let first = state.withLock { state -> Bool? in
            guard state.keeper != nil else {
                // A stop that came first has left already: this join is not recorded. Otherwise the recording
                // begins, and a stop from now on is the recorder thread's to carry out.
                guard !state.started, state.stopRequested == nil else { return nil }
                state.started = true
                return true
            }
            let offset = offsetLocked(state)
            state.keeper?.resync(peers: peers, topic: snapshot.topic, at: offset)
            return false
        }
        guard first == true else { return }
        let wall = Int64(Date().timeIntervalSince1970 * 1000)
        let started = RecordingRecord.utcText(milliseconds: wall)
        var outputs: [any MixOutput] = []
        do {
            if let audioPath = settings.audioPath {
                outputs.append(
                    try OggOpusWriter(
                        path: audioPath,
                        tags: Self.tags(room: snapshot.room, topic: snapshot.topic, started: started)))
            }
            for make in settings.outputs { outputs.append(try make()) }
        } catch {
            for output in outputs { try? output.close() }
            fail("the recorder could not write: \(Self.problem(of: error))")
            return
        }
        let keeper = RecordKeeper(
            room: snapshot.room, topic: snapshot.topic, startedMilliseconds: wall, selfID: snapshot.selfID,
            roles: snapshot.roles, peers: peers)
        // What the media made before the recording began is not part of it.
        Self.dropStamped(from: ring)
        state.withLock { state in
            state.keeper = keeper
            state.startMicroseconds = MonotonicClock.microseconds()
        }
        if let audioPath = settings.audioPath {
            log("Recording \(snapshot.room) to \(audioPath).")
        } else {
            log("Recording \(snapshot.room) to its streams alone (no file, no record).")
        }
        let box = OutputsBox(outputs)
        startThread(named: "clubroom-recorder") { [self] in record(into: box) }
    }

    /// Tells the room's hosts how a stream of the server's that this recorder carries goes (`stream_status`), a
    /// sentence per change. Any thread; nothing is sent before it joined.
    public func report(streamStatus sentence: String) {
        let session = state.withLock { $0.session }
        session?.send(.streamStatus(String(sentence.prefix(ClientRequest.maxStreamStatusLength))))
    }

    /// Says why, leaves, and ends the run: the file could not be written.
    private func fail(_ reason: String) {
        let session = state.withLock { state -> RoomSession? in
            if state.failure == nil { state.failure = reason }
            return state.session
        }
        session?.send(.recorderError(String(reason.prefix(ClientRequest.maxRecorderErrorLength))))
        session?.leave()
        finish(.failed("The recording stopped: \(reason)."))
    }

    /// Ends the run with `outcome`, unless it already has one.
    private func finish(_ outcome: RecordingOutcome) {
        let first = state.withLock { state -> Bool in
            guard state.outcome == nil else { return false }
            state.outcome = outcome
            return true
        }
        if first { done.signal() }
    }

    private func offset() -> Int64 { state.withLock { offsetLocked($0) } }

    private func offsetLocked(_ state: State) -> Int64 {
        guard state.startMicroseconds > 0 else { return 0 }
        return (MonotonicClock.microseconds() - state.startMicroseconds) / 1000
    }

    // MARK: The recorder's thread

    private final class OutputsBox: @unchecked Sendable {
        // Used by the recorder's thread alone.
        let outputs: [any MixOutput]
        init(_ outputs: [any MixOutput]) { self.outputs = outputs }
    }

    private func record(into box: OutputsBox) {
        let start = state.withLock { $0.startMicroseconds }
        let frameMicroseconds = AudioFormat.frameMicroseconds
        let limit = settings.seconds.map { Int64($0) * 1_000_000 / frameMicroseconds }
        var written: Int64 = 0
        // The record is written at once, so that even a recorder killed in its first moments leaves one.
        var lastRecord = start - Self.recordInterval * 1000
        let silence = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        var stamped = [Int16](repeating: 0, count: Self.stampedFrame)
        var problem: String?
        func put(_ frame: [Int16]) -> Bool {
            if let limit, written >= limit { return false }
            for output in box.outputs {
                do {
                    try output.write(frame, offset: written * frameMicroseconds / 1000)
                } catch {
                    problem = "the recorder could not write: \(Self.problem(of: error))"
                    return false
                }
            }
            written += 1
            return true
        }
        loop: while true {
            _ = wake.wait(timeout: .now() + .milliseconds(20))
            let now = MonotonicClock.microseconds()
            let due = (now - start) / frameMicroseconds
            while ring.availableToRead >= Self.stampedFrame {
                stamped.withUnsafeMutableBufferPointer { _ = ring.read(into: $0) }
                var stamp: Int64 = 0
                for index in 0..<4 { stamp |= Int64(UInt16(bitPattern: stamped[index])) << (16 * index) }
                let slot = Self.slot(stamp: stamp, start: start, now: now)
                // A frame long after the last one had its place held by nothing: silence fills it.
                if slot - written > Self.lateFrames || (written == 0 && slot > 0) {
                    while written < slot, put(silence) {}
                }
                if !put(Array(stamped[4...])) { break }
            }
            // No frame for a while (reconnecting): silence keeps the timeline.
            if problem == nil, due - written > 2 * Self.lateFrames {
                while written < due - Self.lateFrames, put(silence) {}
            }
            applyHeard(start: start)
            let stop = state.withLock { $0.stopRequested }
            let timeUp = limit.map { written >= $0 } ?? false
            if problem != nil || stop != nil || timeUp { break loop }
            if now - lastRecord >= Self.recordInterval * 1000 {
                lastRecord = now
                if let failed = writeRecord(duration: written * frameMicroseconds / 1000, complete: false) {
                    problem = failed
                    break loop
                }
            }
        }
        let duration = written * frameMicroseconds / 1000
        for output in box.outputs {
            do {
                try output.close()
            } catch {
                if problem == nil { problem = "the recorder could not write: \(Self.problem(of: error))" }
            }
        }
        if problem == nil { problem = writeRecord(duration: duration, complete: true) }
        if let problem {
            _ = writeRecord(duration: duration, complete: false)
            fail(problem)
            return
        }
        if !state.withLock({ $0.ended }) {
            state.withLock { $0.session }?.leave()
            // A stop from the server (who stopped the recording, the room's end) comes as a signal and as the
            // room's word at once: the word, before the connection's end, is heard before saying why it ended.
            _ = sessionEnded.wait(timeout: .now() + .seconds(2))
        }
        let why = state.withLock { $0.roomsWord ?? $0.stopRequested ?? "its time was up" }
        finish(.finished(milliseconds: duration, why: why))
    }

    // MARK: The ring

    /// The media thread's side: `frame` stamped with `time` (µs) goes into `ring` as one write of
    /// ``stampedFrame`` samples, or not at all when it does not fit, so the ring only ever holds whole stamped
    /// frames.
    static func push(_ frame: UnsafeBufferPointer<Int16>, at time: Int64, into ring: SampleRing) {
        guard frame.count == AudioFormat.samplesPerFrame, ring.availableToWrite >= stampedFrame else { return }
        withUnsafeTemporaryAllocation(of: Int16.self, capacity: stampedFrame) { stamped in
            for index in 0..<4 { stamped[index] = Int16(truncatingIfNeeded: time >> (16 * index)) }
            for index in 0..<frame.count { stamped[4 + index] = frame[index] }
            _ = ring.write(UnsafeBufferPointer(stamped))
        }
    }

    /// Drops the whole stamped frames waiting in `ring` (the reader's side): what the media made before the
    /// recording began.
    static func dropStamped(from ring: SampleRing) {
        _ = ring.discard(count: ring.availableToRead / stampedFrame * stampedFrame)
    }

    /// The place (in frames from `start`) of a frame stamped `stamp`, when the recorder's clock reads `now`. The
    /// stamp is taken as no earlier than `start` and no later than `now`, so a stamp that is not one (a ring out
    /// of step, a clock gone wrong) can neither trap nor have silence fill more than the time that really passed.
    static func slot(stamp: Int64, start: Int64, now: Int64) -> Int64 {
        let frameMicroseconds = AudioFormat.frameMicroseconds
        // `a - b` within 0...limit, however far apart they are.
        func span(_ a: Int64, _ b: Int64, limit: Int64) -> Int64 {
            let (difference, overflow) = a.subtractingReportingOverflow(b)
            if overflow { return a < b ? 0 : limit }
            return min(max(0, difference), limit)
        }
        let elapsed = span(now, start, limit: Int64.max - frameMicroseconds)
        return (span(stamp, start, limit: elapsed) + frameMicroseconds / 2) / frameMicroseconds
    }

    /// Who started and stopped talking, from the media thread's reports, into the record.
    private func applyHeard(start: Int64) {
        let hold = TalkerActivity<UInt32>.Configuration().hold
        let reports = heardInbox.reports.withLock { reports in
            defer { reports = [] }
            return reports
        }
        state.withLock { state in
            for (at, speakers) in reports {
                var now: Set<PeerID> = []
                for speaker in speakers {
                    guard let peer = speaker.peer.map({ PeerID($0) }), let since = speaker.talkingSince else {
                        continue
                    }
                    now.insert(peer)
                    state.keeper?.talkStarted(peer, at: since - start / 1000)
                }
                // A spurt ends with its last speech packet, a hold before it was reported over; that packet's
                // 20 ms of sound are part of it.
                let end = (at - start) / 1000 - hold + AudioFormat.frameMicroseconds / 1000
                for peer in state.talking.subtracting(now) { state.keeper?.talkEnded(peer, at: end) }
                state.talking = now
            }
        }
    }

    /// Rewrites the record (a temp file beside it, then renamed over it); the failure's words, or nil. A recorder
    /// without a file keeps no record.
    private func writeRecord(duration: Int64, complete: Bool) -> String? {
        guard let path = settings.recordPath,
            let record = state.withLock({ $0.keeper?.record(duration: duration, complete: complete) })
        else { return nil }
        let temporary = path + ".tmp"
        let bytes = record.json.encoded + [0x0A]
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            return "the recorder could not write \(path): \(String(cString: strerror(errno)))"
        }
        var done = 0
        while done < bytes.count {
            let count = bytes[done...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                Glibc.close(descriptor)
                unlink(temporary)
                return "the recorder could not write \(path): \(reason)"
            }
            done += count
        }
        guard Glibc.close(descriptor) == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            return "the recorder could not write \(path): \(reason)"
        }
        return nil
    }

    /// The file's tags: the room, its topic (left out when it has none), and when the recording began.
    static func tags(room: String, topic: String, started: String) -> [(String, String)] {
        [("TITLE", topic.isEmpty ? room : "\(room): \(topic)"), ("ROOM", room)]
            + (topic.isEmpty ? [] : [("TOPIC", topic)]) + [("DATE", started)]
    }

    // MARK: Words

    /// The system's words for a writer's failure.
    static func problem(of error: any Error) -> String {
        if let error = error as? OggOpusWriterError { return error.problem }
        return "\(error)"
    }

    /// Why the room let the recorder go, for the summary.
    static func reason(for end: SessionEnd) -> String {
        switch end {
        case .left: return "it was stopped"
        case .roomEnded: return "the room ended"
        // A recorder is removed only by stopping the recording.
        case .removed: return "the recording was stopped from the room"
        case .replaced: return "another recorder took its place"
        case .closedByServer(let reason): return "the server let it go (\(reason))"
        case .refused(_, let reason): return "the server refused it (\(reason))"
        case .connectionFailed(let words, _): return "the connection was lost (\(words))"
        }
    }

    /// The sentence for a session that ended before the recording began.
    static func sentence(for end: SessionEnd) -> String {
        switch end {
        case .refused(let code, let reason): return "The server refused the recorder (\(code)): \(reason)."
        case .connectionFailed(let words, _): return "Cannot connect: \(words)."
        case .roomEnded: return "The room has ended; there is nothing to record."
        default: return "The recorder could not join: \(reason(for: end))."
        }
    }
}
