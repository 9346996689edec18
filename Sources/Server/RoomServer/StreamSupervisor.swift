import Foundation
import Platform
import RoomCore
import RoomProtocol

/// A destination the server's operator named (`serve --stream NAME=URL`): rooms stream to it by its name alone;
/// its address (with its password or stream key) never leaves the server.
public struct ServerStream: Sendable, Equatable {
    public var name: String
    public var url: String

    public init(name: String, url: String) {
        self.name = name
        self.url = url
    }
}

/// Runs the recorders that carry rooms' streams (`start_stream`): one child per room and destination, this very
/// executable's `record` as for a recording, but with `--destination-file` in place of `--out`. The child reads
/// the room's link and the destination (`NAME=URL`) from two new files of mode 0600 in `DATA/streams/`, so that
/// no address or password is ever in its arguments (`ps`), and joins saying which stream it carries
/// (`X-Clubroom-Stream`). Both files go when it stops.
///
/// It is watched as the recorder is: a child that dies while its stream should go on is started again after a
/// pause that doubles (1 s up to 30 s); one that fails within `RecorderSupervisor.quickFailure` of starting
/// `maxQuickFailures` times in a row is given up, and the room stops streaming there, saying why. `stop_stream`,
/// the room's end and the server's stop send it SIGTERM. One destination's child never touches another's, nor
/// the recording. `docs/streaming.md`.
///
/// Loop thread only, like `RecorderSupervisor`.
final class StreamSupervisor: OutcomeConsumer, @unchecked Sendable {
    struct Key: Hashable, Comparable {
        var room: String
        var stream: String
        static func < (a: Key, b: Key) -> Bool { (a.room, a.stream) < (b.room, b.stream) }
    }

    struct Run {
        var pid: pid_t
        var startedBy: PeerID
        var linkFile: String
        var destinationFile: String
        var startedAt: Timestamp
        var quickFailures: Int
        var stopping = false
    }

    let folder: String
    let launch: RecorderSupervisor.Launch?
    let streams: [ServerStream]
    let log: ServerLog
    /// The link the recorder of `room`'s stream to `stream` joins with; nil when the server cannot make one.
    let link: (_ room: String, _ stream: String) -> String?
    /// The child was given up: the room stops streaming there, for `reason`.
    let gaveUp: (_ room: String, _ stream: String, _ reason: String) -> Void
    let execute: @Sendable (@escaping @Sendable () -> Void) -> Void
    let schedule: (Duration, @escaping @Sendable () -> Void) -> Void
    let clock: () -> Timestamp
    /// Whether this node runs the room's streams: in a cluster, the room's owner does.
    var isHere: (_ room: String) -> Bool = { _ in true }

    private(set) var runs: [Key: Run] = [:]
    private var restarts: [Key: (by: PeerID, quickFailures: Int)] = [:]
    private var pendingStarts: [Key: PeerID] = [:]

    init(
        folder: String, launch: RecorderSupervisor.Launch?, streams: [ServerStream], log: ServerLog,
        link: @escaping (String, String) -> String?, gaveUp: @escaping (String, String, String) -> Void,
        execute: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
        schedule: @escaping (Duration, @escaping @Sendable () -> Void) -> Void,
        clock: @escaping () -> Timestamp = currentTimestamp
    ) {
        self.folder = folder
        self.launch = launch
        self.streams = streams
        self.log = log
        self.link = link
        self.gaveUp = gaveUp
        self.execute = execute
        self.schedule = schedule
        self.clock = clock
        removeStaleFiles()
    }

    /// Removes the links and destinations a server that crashed left behind: each holds a secret.
    private func removeStaleFiles() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasSuffix(".link") || name.hasSuffix(".destination") {
            unlink(folder + "/" + name)
            log.warning("removed \(folder)/\(name), left by an earlier run")
        }
    }

    package func consume(_ outcome: Outcome, in room: String) {
        for order in outcome.streamOrders {
            switch order {
            case .start(let stream, let by):
                if isHere(room) { start(Key(room: room, stream: stream), by: by, quickFailures: 0) }
            case .stop(let stream, _): stop(Key(room: room, stream: stream))
            case .stopAll:
                let keys = Set(runs.keys).union(restarts.keys).union(pendingStarts.keys).filter { $0.room == room }
                for key in keys.sorted() { stop(key) }
            }
        }
    }

    /// Stops every child: the server stops. Their files go now.
    func stopAll() {
        restarts = [:]
        pendingStarts = [:]
        for key in runs.keys.sorted() {
            stop(key)
            if let run = runs[key] {
                unlink(run.linkFile)
                unlink(run.destinationFile)
            }
        }
    }

    private func start(_ key: Key, by: PeerID, quickFailures: Int) {
        if let run = runs[key] {
            if run.stopping { pendingStarts[key] = by }
            return
        }
        restarts[key] = nil
        let what = "room \(key.room): stream to \(key.stream)"
        func fail(_ log: String, _ reason: String) {
            self.log.error("\(what): \(log)")
            gaveUp(key.room, key.stream, reason)
        }
        guard let destination = streams.first(where: { $0.name == key.stream }) else {
            return fail("no such destination", "this server has no stream named \(key.stream)")
        }
        guard let launch else {
            return fail("this server's executable was not found", "the server cannot find its own program")
        }
        guard let link = link(key.room, key.stream) else {
            return fail("cannot make the recorder's link", "the server cannot make its recorder's link")
        }
        let base = folder + "/" + key.room + "-" + key.stream
        let linkFile = base + ".link"
        let destinationFile = base + ".destination"
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            guard chmod(folder, 0o700) == 0 else { throw CocoaError(.fileWriteNoPermission) }
            unlink(linkFile)
            unlink(destinationFile)
            try RecorderSupervisor.writePrivately(link + "\n", to: linkFile)
            try RecorderSupervisor.writePrivately("\(destination.name)=\(destination.url)\n", to: destinationFile)
        } catch {
            unlink(linkFile)
            return fail("cannot write in \(folder)", "the server cannot write in its data folder")
        }
        let arguments =
            launch.arguments + [
                "--link-file", linkFile, "--destination-file", destinationFile, "--started-by", by.rawValue,
            ]
        guard let pid = RecorderSupervisor.spawn(launch.executable, arguments, errors: base + ".log") else {
            unlink(linkFile)
            unlink(destinationFile)
            // A start that fails is a failure at once: tried again after a pause, given up at the third.
            return failedAtOnce(
                key, by: by, failures: quickFailures + 1, how: "could not be started",
                log: "\(launch.executable) could not be started")
        }
        runs[key] = Run(
            pid: pid, startedBy: by, linkFile: linkFile, destinationFile: destinationFile, startedAt: clock(),
            quickFailures: quickFailures)
        log.info("\(what) started by \(by) (recorder pid \(pid))")
        let execute = execute
        startThread(named: "stream-wait") { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let ended = status
            execute { self.exited(key, pid: pid, status: ended) }
        }
    }

    private func stop(_ key: Key) {
        restarts[key] = nil
        pendingStarts[key] = nil
        guard var run = runs[key], !run.stopping else { return }
        run.stopping = true
        runs[key] = run
        kill(run.pid, SIGTERM)
        log.info("room \(key.room): stream to \(key.stream) stopped")
    }

    private func exited(_ key: Key, pid: pid_t, status: Int32) {
        guard let run = runs[key], run.pid == pid else { return }
        runs[key] = nil
        unlink(run.linkFile)
        unlink(run.destinationFile)
        let how = RecorderSupervisor.describe(status)
        let what = "room \(key.room): stream to \(key.stream)"
        if run.stopping {
            log.info("\(what): recorder \(pid) \(how)")
            if let by = pendingStarts.removeValue(forKey: key) { start(key, by: by, quickFailures: 0) }
            return
        }
        let quick = clock() - run.startedAt < RecorderSupervisor.quickFailure
        failedAtOnce(
            key, by: run.startedBy, failures: quick ? run.quickFailures + 1 : 0, how: how, log: "recorder \(pid) \(how)"
        )
    }

    /// A child ended or could not start: it is started again after a pause that doubles with each failure at once
    /// in a row (`failures`), and given up at `maxQuickFailures`, the room told why.
    private func failedAtOnce(_ key: Key, by: PeerID, failures: Int, how: String, log detail: String) {
        let what = "room \(key.room): stream to \(key.stream)"
        if failures >= RecorderSupervisor.maxQuickFailures {
            log.error("\(what): \(detail), \(failures) times at once; not started again")
            gaveUp(key.room, key.stream, "its recorder keeps failing at once (it \(how))")
            return
        }
        let pause = min(
            RecorderSupervisor.longestPause, RecorderSupervisor.firstPause << Int64(max(0, failures - 1)))
        log.warning("\(what): \(detail); starting it again in \(pause / 1000) s")
        restarts[key] = (by, failures)
        schedule(.milliseconds(pause)) { [self] in
            guard let restart = restarts[key] else { return }
            start(key, by: restart.by, quickFailures: restart.quickFailures)
        }
    }
}

extension ServerState {
    /// The supervisor of this server's stream recorders, wired as the recorders' (`makeRecorders`).
    func makeStreams() -> StreamSupervisor {
        let launch = configuration.recorderCommand.flatMap { command in
            command.first.map { RecorderSupervisor.Launch(executable: $0, arguments: Array(command.dropFirst())) }
        }
        return StreamSupervisor(
            folder: configuration.dataDirectory + "/streams",
            launch: configuration.recorderCommand == nil ? RecorderSupervisor.Launch.ownRecord : launch,
            streams: configuration.streams, log: log,
            link: { [unowned self] room, stream in
                recorderLink(room, identity: RoomAuthority.streamIdentity(stream), name: "Stream \(stream)")
            },
            gaveUp: { [unowned self] room, stream, reason in rooms.streamGaveUp(stream, in: room, reason: reason) },
            execute: { [loop] task in loop.execute(task) },
            schedule: { [unowned self] delay, task in _ = rooms.loop?.schedule(after: delay, task) })
    }

}
