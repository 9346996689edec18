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
/// It is watched as the recorder is (`ChildSupervisor`): a child that dies while its stream should go on is started
/// again after a pause that doubles (1 s up to 30 s); one that fails within `Children.quickFailure` of starting
/// `maxQuickFailures` times in a row is given up, and the room stops streaming there, saying why. `stop_stream`,
/// the room's end and the server's stop send it SIGTERM. One destination's child never touches another's, nor
/// the recording. `docs/streaming.md`.
typealias StreamSupervisor = ChildSupervisor<Streams>

/// The streams' kind of child: one per room and destination.
struct Streams: ChildKind {
    struct Key: Hashable, Comparable, Sendable {
        var room: String
        var stream: String
        static func < (a: Key, b: Key) -> Bool { (a.room, a.stream) < (b.room, b.stream) }
    }

    let folder: String
    let launch: ChildLaunch?
    let streams: [ServerStream]
    /// The link the recorder of `room`'s stream to `stream` joins with; nil when the server cannot make one.
    let link: (_ room: String, _ stream: String) -> String?
    /// The child was given up: the room stops streaming there, for `reason`.
    let gaveUp: (_ room: String, _ stream: String, _ reason: String) -> Void

    var waiterName: String { "stream-wait" }

    func room(of key: Key) -> String { key.room }

    func orders(in outcome: Outcome, of room: String) -> [ChildOrder<Key>] {
        outcome.streamOrders.map { order in
            switch order {
            case .start(let stream, let by): .start(Key(room: room, stream: stream), by: by)
            case .stop(let stream, let by): .stop(Key(room: room, stream: stream), by: by)
            case .stopAll: .stopRoom
            }
        }
    }

    /// Removes the links and destinations a server that crashed left behind: each holds a secret.
    func removeStaleFiles(log: ServerLog) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasSuffix(".link") || name.hasSuffix(".destination") {
            unlink(folder + "/" + name)
            log.warning("removed \(folder)/\(name), left by an earlier run")
        }
    }

    private func what(_ key: Key) -> String { "room \(key.room): stream to \(key.stream)" }

    func prepare(_ key: Key, by: PeerID, now: Timestamp, log: ServerLog) -> ChildStart? {
        func fail(_ line: String, _ reason: String) -> ChildStart? {
            log.error("\(what(key)): \(line)")
            gaveUp(key.room, key.stream, reason)
            return nil
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
            try Children.makePrivateFolder(folder)
            unlink(linkFile)
            unlink(destinationFile)
            try Children.writePrivately(link + "\n", to: linkFile)
            try Children.writePrivately("\(destination.name)=\(destination.url)\n", to: destinationFile)
        } catch {
            unlink(linkFile)
            return fail("cannot write in \(folder)", "the server cannot write in its data folder")
        }
        return ChildStart(
            executable: launch.executable,
            arguments: launch.arguments + [
                "--link-file", linkFile, "--destination-file", destinationFile, "--started-by", by.rawValue,
            ], errors: base + ".log", files: [linkFile, destinationFile])
    }

    /// A start that fails is a failure at once: tried again after a pause, given up at the third.
    func spawnFailed(_ key: Key, _ start: ChildStart, log: ServerLog) -> Bool { true }

    func startedLine(_ key: Key, by: PeerID, _ start: ChildStart, pid: pid_t) -> String {
        "\(what(key)) started by \(by) (recorder pid \(pid))"
    }

    func stoppedLine(_ key: Key, by: PeerID?) -> String { "\(what(key)) stopped" }

    func endedLine(_ key: Key, _ start: ChildStart, pid: pid_t, how: String) -> String {
        "\(what(key)): recorder \(pid) \(how)"
    }

    func restartingLine(_ key: Key, detail: String, seconds: Int64) -> String {
        "\(what(key)): \(detail); starting it again in \(seconds) s"
    }

    func gaveUp(_ key: Key, detail: String, how: String, failures: Int, log: ServerLog) {
        log.error("\(what(key)): \(detail), \(failures) times at once; not started again")
        gaveUp(key.room, key.stream, "its recorder keeps failing at once (it \(how))")
    }
}

extension ServerState {
    /// The supervisor of this server's stream recorders, wired as the recorders' (`makeRecorders`).
    func makeStreams() -> StreamSupervisor {
        StreamSupervisor(
            Streams(
                folder: configuration.dataDirectory + "/streams",
                launch: ChildLaunch.configured(configuration.recorderCommand), streams: configuration.streams,
                link: { [unowned self] room, stream in
                    recorderLink(room, identity: RoomAuthority.streamIdentity(stream), name: "Stream \(stream)")
                },
                gaveUp: { [unowned self] room, stream, reason in rooms.streamGaveUp(stream, in: room, reason: reason) }),
            log: log, execute: { [loop] task in loop.execute(task) },
            schedule: { [unowned self] delay, task in _ = rooms.loop?.schedule(after: delay, task) })
    }

}
