import Foundation
import Platform
import RoomCore
import RoomProtocol

/// Runs the recorders rooms ask for (`start_recording`): each is a child process, by default this very executable's
/// `record`, which joins the room with a recorder's link the server writes for it (a new file of mode 0600, in
/// `DATA/recordings/`, removed when it or the server stops) and writes `DATA/recordings/ROOM-YYYYMMDDTHHMMSSZ.opus`
/// (`-2`, `-3`, ... after the name when it is taken).
///
/// It is watched (`ChildSupervisor`): a recorder that dies while the recording should go on is started again into a
/// new file after a pause that doubles (1 s up to 30 s); one that fails within `quickFailure` of starting
/// `maxQuickFailures` times in a row is not started again, and the room's hosts and moderators are told why.
/// `stop_recording`, the room's end and the server's stop send it SIGTERM, on which it closes its file and leaves.
/// `docs/deploy.md`, "Recordings".
typealias RecorderSupervisor = ChildSupervisor<Recordings>

/// The recorders' kind of child: one per room, keyed by the room's name.
struct Recordings: ChildKind {
    /// The identity the server's own recorders join as.
    static let identity: PeerID = "recorder"

    let folder: String
    let launch: ChildLaunch?
    /// The link a recorder of `room` joins with; nil when the server cannot make one (not listening yet).
    let link: (_ room: String) -> String?
    /// Tells the room's hosts and moderators a sentence, capitalised and with its full stop (the recording stopped,
    /// and why).
    let tell: (_ room: String, _ sentence: String) -> Void

    var waiterName: String { "recorder-wait" }

    func room(of key: String) -> String { key }

    func orders(in outcome: Outcome, of room: String) -> [ChildOrder<String>] {
        outcome.recorderOrders.map { order in
            switch order {
            case .start(let by): .start(room, by: by)
            case .stop(let by): .stop(room, by: by)
            }
        }
    }

    /// Removes the link files a server that stopped without cleaning up (it crashed) left in the folder: each
    /// holds a recorder's token, and no recorder of this server has read them.
    func removeStaleFiles(log: ServerLog) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasSuffix(".link") {
            unlink(folder + "/" + name)
            log.warning("removed \(folder)/\(name), a recorder's link left by an earlier run")
        }
    }

    func prepare(_ room: String, by: PeerID, now: Timestamp, log: ServerLog) -> ChildStart? {
        guard let launch else {
            log.error("room \(room): cannot record: this server's executable was not found")
            tell(room, "The recording could not start: the server cannot find its own program.")
            return nil
        }
        guard let link = link(room) else {
            log.error("room \(room): cannot record: the server cannot make its recorder's link")
            tell(room, "The recording could not start: the server cannot make its recorder's link.")
            return nil
        }
        let name = freeName("\(room)-\(Self.stamp(now))")
        let file = folder + "/" + name + ".opus"
        let linkFile = folder + "/" + name + ".link"
        do {
            try Children.makePrivateFolder(folder)
            try Children.writePrivately(link + "\n", to: linkFile)
        } catch {
            log.error("room \(room): cannot record: cannot write \(linkFile)")
            tell(room, "The recording could not start: the server cannot write in \(folder).")
            return nil
        }
        return ChildStart(
            executable: launch.executable,
            arguments: launch.arguments + ["--link-file", linkFile, "--out", file, "--started-by", by.rawValue],
            errors: folder + "/" + name + ".log", files: [linkFile], output: file)
    }

    func spawnFailed(_ room: String, _ start: ChildStart, log: ServerLog) -> Bool {
        log.error("room \(room): cannot record: \(start.executable) could not be started")
        tell(room, "The recording could not start: the recorder program could not be started.")
        return false
    }

    func startedLine(_ room: String, by: PeerID, _ start: ChildStart, pid: pid_t) -> String {
        "room \(room): recording started by \(by) into \(start.output ?? "") (recorder pid \(pid))"
    }

    func stoppedLine(_ room: String, by: PeerID?) -> String {
        "room \(room): recording stopped" + (by.map { " by \($0)" } ?? " (the room ended)")
    }

    func endedLine(_ room: String, _ start: ChildStart, pid: pid_t, how: String) -> String {
        "room \(room): recorder \(pid) \(how); \(start.output ?? "") is complete"
    }

    func restartingLine(_ room: String, detail: String, seconds: Int64) -> String {
        "room \(room): \(detail) while recording; starting it again in \(seconds) s"
    }

    func gaveUp(_ room: String, detail: String, how: String, failures: Int, log: ServerLog) {
        log.error("room \(room): \(detail), \(failures) times at once; not started again")
        tell(room, "The recorder keeps failing at once (it \(how)); the recording stopped.")
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

    /// `20261206T050000Z`: the recording's start in UTC, in its file's name.
    static func stamp(_ milliseconds: Timestamp) -> String {
        var time = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }
}

extension ServerState {
    /// The supervisor of this server's recorders, wired to its folder, its secret, its connections and its loop.
    func makeRecorders() -> RecorderSupervisor {
        RecorderSupervisor(
            Recordings(
                folder: configuration.dataDirectory + "/recordings",
                launch: ChildLaunch.configured(configuration.recorderCommand),
                link: { [unowned self] room in recorderLink(room) },
                tell: { [unowned self] room, sentence in rooms.recorderProblem(sentence, in: room) }),
            log: log, execute: { [loop] task in loop.execute(task) },
            schedule: { [unowned self] delay, task in _ = rooms.loop?.schedule(after: delay, task) })
    }

    /// A link for the server's own recorder of `room`: a token of role `recorder` for the identity `recorder`,
    /// valid 7 days, to this server at the host its children reach it at (`OwnLinkHost`).
    func recorderLink(
        _ room: String, identity: PeerID = Recordings.identity, name: String = "Recorder"
    ) -> String? {
        guard let port = listeningPort else { return nil }
        let now = currentTimestamp() / 1000
        let claims = TokenClaims(
            subject: identity.rawValue, name: name, room: room,
            role: RoleName.recorder.rawValue, expiresAt: now + 7 * 86_400, notBefore: now - 60, issuedAt: now)
        guard let token = try? verifier.issuer.issue(claims) else { return nil }
        return ServerAddress(secure: configuration.tls != nil, host: ownLinkHost, port: port).link(
            room: room, invite: token)
    }
}
