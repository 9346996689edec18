import CSpawn
import Foundation
import Platform
import RoomCore
import RoomProtocol

/// Runs the recorders rooms ask for (`start_recording`): each is a child process, by default this very executable's
/// `record`, which joins the room with a recorder's link the server writes for it (a new file of mode 0600, in
/// `DATA/recordings/`, removed when it or the server stops) and writes `DATA/recordings/ROOM-YYYYMMDDTHHMMSSZ.opus`
/// (`-2`, `-3`, ... after the name when it is taken).
///
/// It is watched: a recorder that dies while the recording should go on is started again into a new file after a
/// pause that doubles (1 s up to 30 s); one that fails within `quickFailure` of starting `maxQuickFailures` times in
/// a row is not started again, and the room's hosts and moderators are told why. `stop_recording`, the room's end
/// and the server's stop send it SIGTERM, on which it closes its file and leaves. `docs/deploy.md`, "Recordings".
///
/// Loop thread only (like the rest of `ServerState`): the threads that wait for children hand back to it.
final class RecorderSupervisor: OutcomeConsumer, @unchecked Sendable {
    /// How a recorder is started: the program and the words before the supervisor's own arguments.
    struct Launch: Sendable {
        var executable: String
        var arguments: [String]

        /// This executable's `record`: `/proc/self/exe` itself, which still names the running program after a
        /// package upgrade replaced (or deleted) the file it was started from.
        static var ownRecord: Launch? {
            guard FileManager.default.fileExists(atPath: "/proc/self/exe") else { return nil }
            return Launch(executable: "/proc/self/exe", arguments: ["record"])
        }
    }

    /// One room's recorder.
    struct Run {
        var pid: pid_t
        var startedBy: PeerID
        var file: String
        var linkFile: String
        var startedAt: Timestamp
        /// How many times in a row it failed soon after starting.
        var quickFailures: Int
        /// Set once it was told to stop: its end is expected.
        var stopping = false
    }

    /// The identity the server's own recorders join as.
    static let identity: PeerID = "recorder"
    /// A recorder that exits sooner than this after starting failed at once.
    static let quickFailure: Timestamp = 5_000
    /// How many quick failures in a row end the recording.
    static let maxQuickFailures = 3
    static let firstPause: Timestamp = 1_000
    static let longestPause: Timestamp = 30_000

    let folder: String
    let launch: Launch?
    let log: ServerLog
    /// The link a recorder of `room` joins with; nil when the server cannot make one (not listening yet).
    let link: (_ room: String) -> String?
    /// Tells the room's hosts and moderators a sentence, capitalised and with its full stop (the recording stopped,
    /// and why).
    let tell: (_ room: String, _ sentence: String) -> Void
    /// Runs a task on the loop, now or after a pause.
    let execute: @Sendable (@escaping @Sendable () -> Void) -> Void
    let schedule: (Duration, @escaping @Sendable () -> Void) -> Void
    let clock: () -> Timestamp
    /// Whether this node runs the room's recorder: in a cluster, the room's owner does.
    var isHere: (_ room: String, _ peer: PeerID) -> Bool = { _, _ in true }

    private(set) var runs: [String: Run] = [:]
    /// Rooms whose recorder waits to be started again, with the failures so far.
    private var restarts: [String: (by: PeerID, quickFailures: Int)] = [:]
    /// Rooms asked to record again while their last recorder still closes its file: started when it exits.
    private(set) var pendingStarts: [String: PeerID] = [:]

    init(
        folder: String, launch: Launch?, log: ServerLog, link: @escaping (String) -> String?,
        tell: @escaping (String, String) -> Void,
        execute: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
        schedule: @escaping (Duration, @escaping @Sendable () -> Void) -> Void,
        clock: @escaping () -> Timestamp = currentTimestamp
    ) {
        self.folder = folder
        self.launch = launch
        self.log = log
        self.link = link
        self.tell = tell
        self.execute = execute
        self.schedule = schedule
        self.clock = clock
        removeStaleLinks()
    }

    /// Removes the link files a server that stopped without cleaning up (it crashed) left in the folder: each
    /// holds a recorder's token, and no recorder of this server has read them.
    private func removeStaleLinks() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasSuffix(".link") {
            unlink(folder + "/" + name)
            log.warning("removed \(folder)/\(name), a recorder's link left by an earlier run")
        }
    }

    package func consume(_ outcome: Outcome, in room: String) {
        for order in outcome.recorderOrders {
            switch order {
            case .start(let by): if isHere(room, by) { start(room, by: by, quickFailures: 0) }
            case .stop(let by): stop(room, by: by)
            }
        }
    }

    /// Stops every recorder: the server stops. Their link files go now (each read its link when it started):
    /// the loop that would hear them exit stops too.
    func stopAll() {
        restarts = [:]
        pendingStarts = [:]
        for room in runs.keys.sorted() {
            stop(room, by: nil)
            if let run = runs[room] { unlink(run.linkFile) }
        }
    }

    private func start(_ room: String, by: PeerID, quickFailures: Int) {
        if let run = runs[room] {
            // The last recorder still closes its file: start the new one when it has.
            if run.stopping { pendingStarts[room] = by }
            return
        }
        restarts[room] = nil
        guard let launch else {
            log.error("room \(room): cannot record: this server's executable was not found")
            tell(room, "The recording could not start: the server cannot find its own program.")
            return
        }
        guard let link = link(room) else {
            log.error("room \(room): cannot record: the server cannot make its recorder's link")
            tell(room, "The recording could not start: the server cannot make its recorder's link.")
            return
        }
        let now = clock()
        let name = freeName("\(room)-\(Self.stamp(now))")
        let file = folder + "/" + name + ".opus"
        let linkFile = folder + "/" + name + ".link"
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // Made before this server, it may let others in: only the server's user reads recordings.
            guard chmod(folder, 0o700) == 0 else { throw CocoaError(.fileWriteNoPermission) }
            try Self.writePrivately(link + "\n", to: linkFile)
        } catch {
            log.error("room \(room): cannot record: cannot write \(linkFile)")
            tell(room, "The recording could not start: the server cannot write in \(folder).")
            return
        }
        let arguments =
            launch.arguments + ["--link-file", linkFile, "--out", file, "--started-by", by.rawValue]
        guard let pid = Self.spawn(launch.executable, arguments, errors: folder + "/" + name + ".log") else {
            unlink(linkFile)
            log.error("room \(room): cannot record: \(launch.executable) could not be started")
            tell(room, "The recording could not start: the recorder program could not be started.")
            return
        }
        runs[room] = Run(
            pid: pid, startedBy: by, file: file, linkFile: linkFile, startedAt: now, quickFailures: quickFailures)
        log.info("room \(room): recording started by \(by) into \(file) (recorder pid \(pid))")
        let execute = execute
        startThread(named: "recorder-wait") { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let ended = status
            execute { self.exited(room, pid: pid, status: ended) }
        }
    }

    private func stop(_ room: String, by: PeerID?) {
        restarts[room] = nil
        pendingStarts[room] = nil
        guard var run = runs[room], !run.stopping else { return }
        run.stopping = true
        runs[room] = run
        kill(run.pid, SIGTERM)
        log.info("room \(room): recording stopped" + (by.map { " by \($0)" } ?? " (the room ended)"))
    }

    private func exited(_ room: String, pid: pid_t, status: Int32) {
        guard let run = runs[room], run.pid == pid else { return }
        runs[room] = nil
        unlink(run.linkFile)
        let how = Self.describe(status)
        if run.stopping {
            log.info("room \(room): recorder \(pid) \(how); \(run.file) is complete")
            if let by = pendingStarts.removeValue(forKey: room) { start(room, by: by, quickFailures: 0) }
            return
        }
        let quick = clock() - run.startedAt < Self.quickFailure
        let failures = quick ? run.quickFailures + 1 : 0
        if failures >= Self.maxQuickFailures {
            log.error("room \(room): recorder \(pid) \(how), \(failures) times at once; not started again")
            tell(room, "The recorder keeps failing at once (it \(how)); the recording stopped.")
            return
        }
        let pause = min(Self.longestPause, Self.firstPause << Int64(max(0, failures - 1)))
        log.warning("room \(room): recorder \(pid) \(how) while recording; starting it again in \(pause / 1000) s")
        restarts[room] = (run.startedBy, failures)
        schedule(.milliseconds(pause)) { [self] in
            guard let restart = restarts[room] else { return }
            start(room, by: restart.by, quickFailures: restart.quickFailures)
        }
    }

    /// `name`, or `name-2`, `name-3`, ... when a recording (or its link) of that name is already there: two
    /// recordings started within a second never share a file.
    private func freeName(_ name: String) -> String {
        func taken(_ candidate: String) -> Bool {
            [".opus", ".link"].contains { FileManager.default.fileExists(atPath: folder + "/" + candidate + $0) }
        }
        var candidate = name
        var number = 1
        while taken(candidate) {
            number += 1
            candidate = "\(name)-\(number)"
        }
        return candidate
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

    /// `20261206T050000Z`: the recording's start in UTC, in its file's name.
    static func stamp(_ milliseconds: Timestamp) -> String {
        var time = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// How a child ended, for the log: "exited with status 1", "was killed by signal 9".
    static func describe(_ status: Int32) -> String {
        let signal = status & 0x7f
        if signal == 0 { return "exited with status \((status >> 8) & 0xff)" }
        return "was killed by signal \(signal)"
    }

    /// Starts `executable` with `arguments`: stdin and stdout `/dev/null`, stderr appended to `errors`, no other
    /// descriptor of the server, every signal at its default and none blocked.
    static func spawn(_ executable: String, _ arguments: [String], errors: String) -> pid_t? {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        var none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        clubroom_spawn_close_from(&actions, 3)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, &attributes, argv, environ) == 0 else { return nil }
        return pid
    }
}

extension ServerState {
    /// The supervisor of this server's recorders, wired to its folder, its secret, its connections and its loop.
    func makeRecorders() -> RecorderSupervisor {
        let launch = configuration.recorderCommand.flatMap { command in
            command.first.map { RecorderSupervisor.Launch(executable: $0, arguments: Array(command.dropFirst())) }
        }
        return RecorderSupervisor(
            folder: configuration.dataDirectory + "/recordings",
            launch: configuration.recorderCommand == nil ? RecorderSupervisor.Launch.ownRecord : launch, log: log,
            link: { [unowned self] room in recorderLink(room) },
            tell: { [unowned self] room, sentence in tellRecorders(room, sentence) },
            execute: { [loop] task in loop.execute(task) },
            schedule: { [unowned self] delay, task in _ = rooms.loop?.schedule(after: delay, task) })
    }

    /// A link for the server's own recorder of `room`: a token of role `recorder` for the identity `recorder`,
    /// valid 7 days, to this server on the loopback address.
    func recorderLink(
        _ room: String, identity: PeerID = RecorderSupervisor.identity, name: String = "Recorder"
    ) -> String? {
        guard let port = listeningPort else { return nil }
        let now = currentTimestamp() / 1000
        let claims = TokenClaims(
            subject: identity.rawValue, name: name, room: room,
            role: RoleName.recorder.rawValue, expiresAt: now + 7 * 86_400, notBefore: now - 60, issuedAt: now)
        guard let token = try? verifier.issuer.issue(claims) else { return nil }
        let host = ["0.0.0.0", "::", ""].contains(configuration.host) ? "127.0.0.1" : configuration.host
        return ServerAddress(secure: configuration.tls != nil, host: host, port: port).link(room: room, invite: token)
    }

    /// Tells a room's hosts and moderators (whoever may record) connected here why its recording stopped or could
    /// not start: a notice of its own (`recording`), the sentence they read.
    func tellRecorders(_ room: String, _ sentence: String) {
        for (peer, entry) in connections.members(of: room) {
            guard let role = rooms.role(of: peer, in: room), configuration.roles.can(role, .record) else { continue }
            entry.send(ServerMessage(.error(code: .recording, message: sentence, id: nil), seq: nil))
        }
    }
}
