import Foundation
import Platform
import RoomCore
import RoomProtocol

/// What one kind of supervised child differs in: which outcomes ask for it, how it is made ready (its files, its
/// program and words), and what the log and the room are told. The rest (the run table, restarts, pending starts,
/// the waiting thread, the exit handling and the doubling pause) is `ChildSupervisor`'s, the same for every kind.
protocol ChildKind: SendableMetatype {
    /// What names one child: a room, or a room and a destination.
    associatedtype Key: Hashable & Comparable & Sendable

    /// The name of the thread that waits for a child of this kind.
    var waiterName: String { get }
    /// The room `key`'s child serves.
    func room(of key: Key) -> String
    /// What `outcome` of `room` asks of these children.
    func orders(in outcome: Outcome, of room: String) -> [ChildOrder<Key>]
    /// Removes what a server that crashed left in the kind's folder (each file holds a secret).
    func removeStaleFiles(log: ServerLog)
    /// Makes `key`'s child ready to start (its files written), asked for by `by` at `now`; nil when it cannot
    /// start, having said why (in the log and to the room): it is not tried again.
    func prepare(_ key: Key, by: PeerID, now: Timestamp, log: ServerLog) -> ChildStart?
    /// `start` could not be spawned (its files are removed already): true when that counts as a failure at once
    /// (tried again after a pause, given up at the last), false when it ends there, having said why.
    func spawnFailed(_ key: Key, _ start: ChildStart, log: ServerLog) -> Bool
    /// The log's line for a child that started.
    func startedLine(_ key: Key, by: PeerID, _ start: ChildStart, pid: pid_t) -> String
    /// The log's line for a child told to stop, `by` someone or by nobody (the room ended).
    func stoppedLine(_ key: Key, by: PeerID?) -> String
    /// The log's line for a child that ended after it was told to stop.
    func endedLine(_ key: Key, _ start: ChildStart, pid: pid_t, how: String) -> String
    /// The log's line for a child that failed (`detail`: "recorder 4242 exited with status 1") and is started
    /// again after `seconds`.
    func restartingLine(_ key: Key, detail: String, seconds: Int64) -> String
    /// The child failed at once `failures` times in a row (the last: `detail`, it `how`): it is given up; the
    /// log and the room are told.
    func gaveUp(_ key: Key, detail: String, how: String, failures: Int, log: ServerLog)
}

/// What an outcome asks of a kind of child.
enum ChildOrder<Key: Sendable>: Sendable {
    /// Run `key`'s child: `by` asked for it.
    case start(Key, by: PeerID)
    /// Stop it: `by` asked, or nobody did (nil).
    case stop(Key, by: PeerID?)
    /// Stop every child of the room (it ended).
    case stopRoom
}

/// A child made ready: the program with its words, where its stderr goes, the files that go when it ends, and
/// what it writes (for the log).
struct ChildStart {
    var executable: String
    var arguments: [String]
    /// The file its stderr is appended to.
    var errors: String
    /// The files written for it (its link, its destination), removed when it ends or the server stops.
    var files: [String]
    /// The file it writes, if any.
    var output: String?
}

/// How a child is started: the program and the words before the supervisor's own arguments.
struct ChildLaunch: Sendable {
    var executable: String
    var arguments: [String]

    /// This executable's `record`: `/proc/self/exe` itself, which still names the running program after a
    /// package upgrade replaced (or deleted) the file it was started from.
    static var ownRecord: ChildLaunch? {
        guard FileManager.default.fileExists(atPath: "/proc/self/exe") else { return nil }
        return ChildLaunch(executable: "/proc/self/exe", arguments: ["record"])
    }

    /// `serve --recorder PROGRAM [WORDS]` when given, else this executable's `record`.
    static func configured(_ command: [String]?) -> ChildLaunch? {
        guard let command else { return ownRecord }
        return command.first.map { ChildLaunch(executable: $0, arguments: Array(command.dropFirst())) }
    }
}

/// Runs children of one kind and watches them: a child that dies while it should go on is started again after a
/// pause that doubles (1 s up to 30 s); one that fails within `quickFailure` of starting `maxQuickFailures` times
/// in a row is given up. Telling it to stop sends SIGTERM.
///
/// A child's pid is signalled only while it is ours: the thread that waits for it sees it end without reaping it
/// (`WNOWAIT`), and the loop forgets the pid before it reaps the child, so no later `kill` can reach a process
/// that took the number over.
///
/// Loop thread only (like the rest of `ServerState`): the threads that wait for children hand back to it.
final class ChildSupervisor<Kind: ChildKind>: OutcomeConsumer, @unchecked Sendable {
    typealias Key = Kind.Key

    /// One child.
    struct Run {
        var pid: pid_t
        var startedBy: PeerID
        var start: ChildStart
        var startedAt: Timestamp
        /// How many times in a row it failed soon after starting.
        var quickFailures: Int
        /// Set once it was told to stop: its end is expected.
        var stopping = false
    }

    let kind: Kind
    let log: ServerLog
    /// Runs a task on the loop, now or after a pause.
    let execute: @Sendable (@escaping @Sendable () -> Void) -> Void
    let schedule: (Duration, @escaping @Sendable () -> Void) -> Void
    let clock: () -> Timestamp
    /// Whether this node runs the room's children: in a cluster, the room's owner does.
    var isHere: (_ room: String) -> Bool = { _ in true }

    private(set) var runs: [Key: Run] = [:]
    /// Children waiting to be started again, with the failures so far.
    private var restarts: [Key: (by: PeerID, quickFailures: Int)] = [:]
    /// Children asked for again while the last one still ends: started when it has.
    private(set) var pendingStarts: [Key: PeerID] = [:]

    init(
        _ kind: Kind, log: ServerLog, execute: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
        schedule: @escaping (Duration, @escaping @Sendable () -> Void) -> Void,
        clock: @escaping () -> Timestamp = currentTimestamp
    ) {
        self.kind = kind
        self.log = log
        self.execute = execute
        self.schedule = schedule
        self.clock = clock
        kind.removeStaleFiles(log: log)
    }

    package func consume(_ outcome: Outcome, in room: String) {
        for order in kind.orders(in: outcome, of: room) {
            switch order {
            case .start(let key, let by): if isHere(room) { start(key, by: by, quickFailures: 0) }
            case .stop(let key, let by): stop(key, by: by)
            case .stopRoom:
                let keys = Set(runs.keys).union(restarts.keys).union(pendingStarts.keys).filter {
                    kind.room(of: $0) == room
                }
                for key in keys.sorted() { stop(key, by: nil) }
            }
        }
    }

    /// Stops every child: the server stops. Their files go now (each read them when it started): the loop that
    /// would hear them exit stops too.
    func stopAll() {
        restarts = [:]
        pendingStarts = [:]
        for key in runs.keys.sorted() {
            stop(key, by: nil)
            runs[key]?.start.files.forEach { unlink($0) }
        }
    }

    private func start(_ key: Key, by: PeerID, quickFailures: Int) {
        if let run = runs[key] {
            // The last child still ends: start the new one when it has.
            if run.stopping { pendingStarts[key] = by }
            return
        }
        restarts[key] = nil
        let now = clock()
        guard let start = kind.prepare(key, by: by, now: now, log: log) else { return }
        // stdout to /dev/null, stderr appended to the child's errors file, nothing else of the server.
        guard let pid = try? spawnIsolated(start.executable, start.arguments, errors: .appended(start.errors)) else {
            start.files.forEach { unlink($0) }
            if kind.spawnFailed(key, start, log: log) {
                failed(
                    key, by: by, failures: quickFailures + 1, how: "could not be started",
                    detail: "\(start.executable) could not be started")
            }
            return
        }
        runs[key] = Run(pid: pid, startedBy: by, start: start, startedAt: now, quickFailures: quickFailures)
        log.info(kind.startedLine(key, by: by, start, pid: pid))
        let execute = execute
        startThread(named: kind.waiterName) { [self] in
            Children.waitForEnd(pid)
            execute { self.exited(key, pid: pid) }
        }
    }

    private func stop(_ key: Key, by: PeerID?) {
        restarts[key] = nil
        pendingStarts[key] = nil
        guard var run = runs[key], !run.stopping else { return }
        run.stopping = true
        runs[key] = run
        // Not reaped yet (only `exited` reaps, after forgetting it): the pid is still our child's.
        kill(run.pid, SIGTERM)
        log.info(kind.stoppedLine(key, by: by))
    }

    /// `pid` ended (it is not reaped yet): it is forgotten, then reaped.
    private func exited(_ key: Key, pid: pid_t) {
        let run = runs[key].flatMap { $0.pid == pid ? $0 : nil }
        if run != nil { runs[key] = nil }
        let status = Children.reap(pid)
        guard let run else { return }
        run.start.files.forEach { unlink($0) }
        let how = Children.describe(status)
        if run.stopping {
            log.info(kind.endedLine(key, run.start, pid: pid, how: how))
            if let by = pendingStarts.removeValue(forKey: key) { start(key, by: by, quickFailures: 0) }
            return
        }
        let quick = clock() - run.startedAt < Children.quickFailure
        failed(
            key, by: run.startedBy, failures: quick ? run.quickFailures + 1 : 0, how: how,
            detail: "recorder \(pid) \(how)")
    }

    /// A child ended or could not start: it is started again after a pause that doubles with each failure at once
    /// in a row (`failures`), and given up at `maxQuickFailures`.
    private func failed(_ key: Key, by: PeerID, failures: Int, how: String, detail: String) {
        if failures >= Children.maxQuickFailures {
            kind.gaveUp(key, detail: detail, how: how, failures: failures, log: log)
            return
        }
        let pause = min(Children.longestPause, Children.firstPause << Int64(max(0, failures - 1)))
        log.warning(kind.restartingLine(key, detail: detail, seconds: pause / 1000))
        restarts[key] = (by, failures)
        schedule(.milliseconds(pause)) { [self] in
            guard let restart = restarts[key] else { return }
            start(key, by: restart.by, quickFailures: restart.quickFailures)
        }
    }
}

/// The supervisor's rules and the system calls its children need.
enum Children {
    /// A child that exits sooner than this after starting failed at once.
    static let quickFailure: Timestamp = 5_000
    /// How many failures at once in a row give a child up.
    static let maxQuickFailures = 3
    static let firstPause: Timestamp = 1_000
    static let longestPause: Timestamp = 30_000

    /// Waits until `pid` ends, leaving it unreaped (a zombie): its number stays ours until `reap`.
    static func waitForEnd(_ pid: pid_t) {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
    }

    /// Reaps `pid`, which has ended, and returns its status (0 when it cannot be had).
    static func reap(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    /// Writes `text` into a new file only its owner may read, from the moment it exists; fails when it exists.
    static func writePrivately(_ text: String, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard close(descriptor) == 0, written == bytes.count else {
            unlink(path)
            throw CocoaError(.fileWriteUnknown)
        }
    }

    /// Makes `folder` (mode 0700, also when it was there before: made before this server, it may let others in).
    static func makePrivateFolder(_ folder: String) throws {
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard chmod(folder, 0o700) == 0 else { throw CocoaError(.fileWriteNoPermission) }
    }

    /// How a child ended, for the log: "exited with status 1", "was killed by signal 9".
    static func describe(_ status: Int32) -> String {
        let signal = status & 0x7f
        if signal == 0 { return "exited with status \((status >> 8) & 0xff)" }
        return "was killed by signal \(signal)"
    }
}
