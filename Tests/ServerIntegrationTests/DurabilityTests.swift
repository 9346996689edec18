import Foundation
import RoomPersistence
import RoomProtocol
import RoomTesting
import RoomTransport
import StrictJSON
import Synchronization
import Testing
import WebSocket

/// Another program holding the database's write lock (as a backup or the sqlite3 shell would) until told to let
/// go: Python's sqlite3 in a process of its own.
final class DatabaseLockHolder {
    let process = Process()
    private let input = Pipe()
    let output: LineCollector

    init(database: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            """
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
            connection.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            sys.stdin.read()
            connection.execute("ROLLBACK")
            print("released", flush=True)
            """,
            database,
        ]
        let pipe = Pipe()
        process.standardInput = input
        process.standardOutput = pipe
        process.standardError = pipe
        output = LineCollector(pipe.fileHandleForReading)
        try process.run()
        guard output.wait(timeout: 20, { $0 == "locked" }) != nil else {
            release()
            throw HarnessError(description: "python could not lock \(database): \(output.all)")
        }
    }

    /// Lets go of the lock and waits for the process to end.
    func release() {
        try? input.fileHandleForWriting.close()
        _ = output.wait(timeout: 10) { $0 == "released" }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// What a server acknowledges is durable, a crash loses no role, and the network loop never waits for SQLite.
@Suite(.ownThread, .serialized) struct DurabilityTests {
    /// Every echoed chat and every announced topic survives a `kill -9` right after the echo, cycle after cycle,
    /// even while another program holds the database's write lock (so that no write can have reached it yet).
    @Test func whatTheServerAcknowledgedSurvivesKillNine() throws {
        let first = try ServerProcess()
        defer { first.stopAndClean() }
        first.crash()
        let databasePath = first.dataDirectory + "/" + RoomDatabase.fileName
        var echoed: [String] = []
        for cycle in 0..<3 {
            let server = try ServerProcess(directory: first.directory)
            defer { server.crash() }
            let ana = try server.joinedBot("ana", role: "host")
            defer { ana.kill() }
            let lock = try DatabaseLockHolder(database: databasePath)
            defer { lock.release() }
            for index in 0..<15 { ana.send(#"{"cmd":"chat","text":"cycle \#(cycle) message \#(index)"}"#) }
            ana.send(#"{"cmd":"topic","text":"topic of cycle \#(cycle)"}"#)
            for index in 0..<15 {
                let text = "cycle \(cycle) message \(index)"
                try ana.expect("chat") { $0.string("text") == text }
                echoed.append(text)
            }
            try ana.expect("topic_changed") { $0.string("topic") == "topic of cycle \(cycle)" }
            server.crash()
        }
        let last = try ServerProcess(directory: first.directory)
        defer { last.stop() }
        #expect(last.logLines(containing: "applied 16 saved changes the database did not have yet").count == 1)
        let fay = try last.bot(try last.token("fay", role: "audience"))
        defer { fay.kill() }
        let joined = try fay.expect("joined")
        #expect(joined.string("topic") == "topic of cycle 2")
        #expect(chatTexts(joined) == echoed)
    }

    /// A speaker at the crash is a speaker again when it comes back: its role was recorded when it got it.
    @Test func aRoleGivenInTheRoomSurvivesACrash() throws {
        let first = try ServerProcess()
        defer { first.stopAndClean() }
        let ana = try first.joinedBot("ana", role: "host")
        defer { ana.kill() }
        let eli = try first.joinedBot("eli", role: "audience")
        defer { eli.kill() }
        let bo = try first.joinedBot("bo", role: "moderator")
        defer { bo.kill() }
        ana.send(#"{"cmd":"set_role","peer":"eli","role":"speaker"}"#)
        try eli.expect("role_changed") { $0.string("role") == "speaker" }
        bo.send(#"{"cmd":"step_down"}"#)
        try bo.expect("role_changed") { $0.string("peer") == "bo" && $0.string("role") == "audience" }
        let port = first.port
        first.crash()
        try eli.expect("reconnecting")
        let second = try ServerProcess(directory: first.directory, port: port)
        defer { second.stop() }
        #expect(second.logLines(containing: "people were in rooms when the server stopped").count == 1)
        let back = try eli.expect("reconnected", timeout: 20)
        #expect(back.object("self")?.string("role") == "speaker")
        #expect(back.bool("resumed") == true)
        let boBack = try bo.expect("reconnected", timeout: 20)
        #expect(boBack.object("self")?.string("role") == "audience")
        let anaBack = try ana.expect("reconnected", timeout: 20)
        #expect(anaBack.object("self")?.string("role") == "host")
    }

    /// A demotion by someone else is saved with the room (it lasts as long as the room), and lifted when someone
    /// raises the peer again.
    @Test func aDemotionBySomeoneElseIsSavedWithTheRoom() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        let ana = try server.joinedBot("ana", role: "host")
        defer { ana.kill() }
        let chen = try server.joinedBot("chen", role: "speaker")
        defer { chen.kill() }
        let bo = try server.joinedBot("bo", role: "moderator")
        defer { bo.kill() }
        ana.send(#"{"cmd":"set_role","peer":"chen","role":"audience"}"#)
        try chen.expect("role_changed") { $0.string("peer") == "chen" && $0.string("role") == "audience" }
        ana.send(#"{"cmd":"set_role","peer":"bo","role":"speaker"}"#)
        try bo.expect("role_changed") { $0.string("peer") == "bo" && $0.string("role") == "speaker" }
        ana.send(#"{"cmd":"set_role","peer":"bo","role":"moderator"}"#)
        try bo.expect("role_changed") { $0.string("peer") == "bo" && $0.string("role") == "moderator" }
        server.stop()
        let database = try RoomDatabase(path: server.dataDirectory + "/" + RoomDatabase.fileName)
        defer { database.close() }
        #expect(try database.demotions(room: "lobby").map { "\($0.identity) \($0.role)" } == ["chen audience"])
    }

    /// With another program holding the database's write lock, people join (the room's saved state is read
    /// as usual) and chat is echoed; the database catches up once the lock goes, and the log says so once.
    @Test func aLockedDatabaseDelaysNoJoinAndNoChat() throws {
        let first = try ServerProcess()
        defer { first.stopAndClean() }
        do {
            let ana = try first.joinedBot("ana", role: "host")
            defer { ana.kill() }
            ana.send(#"{"cmd":"topic","text":"kept"}"#)
            try ana.expect("topic_changed")
            ana.send(#"{"cmd":"chat","text":"before the lock"}"#)
            try ana.expect("chat")
            #expect(try ana.finish() == 0)
        }
        first.stop()
        let server = try ServerProcess(directory: first.directory)
        defer { server.stop() }
        let databasePath = server.dataDirectory + "/" + RoomDatabase.fileName
        let lock = try DatabaseLockHolder(database: databasePath)
        defer { lock.release() }
        let ana = try server.bot(try server.token("ana", role: "host"))
        defer { ana.kill() }
        let joined = try ana.expect("joined")
        #expect(joined.string("topic") == "kept")
        ana.send(#"{"cmd":"chat","text":"while locked"}"#)
        try ana.expect("chat") { $0.string("text") == "while locked" }
        let fay = try server.bot(try server.token("fay", role: "audience"))
        defer { fay.kill() }
        #expect(chatTexts(try fay.expect("joined")) == ["before the lock", "while locked"])
        #expect(lock.process.isRunning)
        lock.release()
        let database = try RoomDatabase(path: databasePath)
        let deadline = Date().addingTimeInterval(20)
        while try !database.recentChat(room: "lobby").contains(where: { $0.text == "while locked" }),
            Date() < deadline
        {
            usleep(50_000)
        }
        #expect(try database.recentChat(room: "lobby").map(\.text) == ["before the lock", "while locked"])
        #expect(server.logLines(containing: "the database does not take changes now").count <= 1)
        #expect(server.logLines(containing: "changes cannot be saved").isEmpty)
    }

    /// On a full disk the room goes on, the person is told that what they did is not saved, the log says so
    /// once, and the changes are saved once there is room again.
    @Test(
        .enabled(
            if: SmallFilesystem.unavailableReason == nil,
            "full-disk test skipped: \(SmallFilesystem.unavailableReason ?? "")"))
    func aFullDiskIsToldAndNothingIsLostSilently() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-disk-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try SmallFilesystem(at: folder.appendingPathComponent("data").path, bytes: 4 * 1024 * 1024)
        defer { disk.stop() }
        let server = try ServerProcess(directory: folder, launcher: disk.inside([]))
        defer { server.stop() }
        let ana = try server.joinedBot("ana", role: "host")
        defer { ana.kill() }
        ana.send(#"{"cmd":"chat","text":"with room to spare"}"#)
        try ana.expect("chat")
        try disk.fill()
        ana.send(#"{"cmd":"chat","text":"on a full disk","id":7}"#)
        try ana.expect("chat") { $0.string("text") == "on a full disk" }
        let refusal = try ana.expect("error")
        #expect(refusal.string("code") == "not_saved")
        #expect(
            refusal.string("message")
                == "Done, but not saved: the server's disk is full. It is lost if the server restarts before it can "
                + "save again.")
        if case .integer(let id)? = refusal["id"] { #expect(id == 7) } else { Issue.record("no id: \(refusal)") }
        ana.send(#"{"cmd":"topic","text":"set on a full disk","id":8}"#)
        try ana.expect("topic_changed")
        #expect(try ana.expect("error").string("code") == "not_saved")
        #expect(server.log.wait(timeout: 10) { $0.contains("changes cannot be saved") } != nil)
        disk.free()
        #expect(server.log.wait(timeout: 15) { $0.contains("changes are saved again") } != nil)
        #expect(server.logLines(containing: "changes cannot be saved").count == 1)
        server.stop()

        let again = try ServerProcess(directory: folder, launcher: disk.inside([]))
        defer { again.stop() }
        let fay = try again.bot(try again.token("fay", role: "audience"))
        defer { fay.kill() }
        let joined = try fay.expect("joined")
        #expect(joined.string("topic") == "set on a full disk")
        #expect(chatTexts(joined) == ["with room to spare", "on a full disk"])
    }

    /// The notices a bot got that answer no request (no `id`) with `code`.
    private func notices(_ bot: BotProcess, code: String) -> [JSONObject] {
        bot.output.all.compactMap(BotProcess.object).filter {
            $0.string("event") == "error" && $0.string("code") == code && $0["id"] == nil
        }
    }

    /// On a full disk the room goes on and its hosts are told once, a host arriving meanwhile on arrival, and
    /// again when the server saves again; everything said meanwhile is saved then. A restart on a full disk serves
    /// read-only (its log and the hosts are told), and saves once there is room.
    @Test(
        .enabled(
            if: SmallFilesystem.unavailableReason == nil,
            "full-disk test skipped: \(SmallFilesystem.unavailableReason ?? "")"))
    func aFullDiskIsToldToTheHostsOnceAndARestartOnItServesReadOnly() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-disk-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try SmallFilesystem(at: folder.appendingPathComponent("data").path, bytes: 4 * 1024 * 1024)
        defer { disk.stop() }
        let cannotSave =
            "The server cannot save right now: the server's disk is full. The room goes on; what happens in it is "
            + "saved once the server can, and lost if the server stops before then."
        let savesAgain = "The server saves again: what happened in the room while it could not is saved."
        var said = ["with room to spare"]
        do {
            let server = try ServerProcess(directory: folder, launcher: disk.inside([]))
            defer { server.stop() }
            let ana = try server.joinedBot("ana", role: "host")
            defer { ana.kill() }
            let eli = try server.joinedBot("eli", role: "audience")
            defer { eli.kill() }
            eli.send(#"{"cmd":"chat","text":"with room to spare"}"#)
            try ana.expect("chat") { $0.string("text") == "with room to spare" }
            try disk.fill()
            // Within the request rate (bursts of 20, then 10 a second).
            for index in 0..<60 {
                eli.send(#"{"cmd":"chat","text":"full \#(index)","id":\#(index)}"#)
                usleep(110_000)
            }
            for index in 0..<60 {
                try ana.expect("chat", timeout: 20) { $0.string("text") == "full \(index)" }
                said.append("full \(index)")
            }
            #expect(notices(ana, code: "not_saved").map { $0.string("message") } == [cannotSave])
            #expect(notices(eli, code: "not_saved").isEmpty, "only hosts are told")
            // A host arriving while the server cannot save is told on arrival.
            let bo = try server.joinedBot("bo", role: "host")
            defer { bo.kill() }
            try bo.expect("error") { $0.string("code") == "not_saved" && $0.string("message") == cannotSave }
            disk.free()
            #expect(server.log.wait(timeout: 15) { $0.contains("changes are saved again") } != nil)
            try ana.expect("error") { $0.string("code") == "saved" && $0.string("message") == savesAgain }
            try bo.expect("error") { $0.string("code") == "saved" }
            #expect(notices(ana, code: "not_saved").count == 1)
            #expect(server.logLines(containing: "changes cannot be saved").count == 1)
        }

        // A restart on a full disk: the server serves, read-only, and says so.
        try disk.fill()
        do {
            let server = try ServerProcess(directory: folder, launcher: disk.inside([]))
            defer { server.stop() }
            #expect(server.logLines(containing: "the server starts read-only: the server's disk is full").count == 1)
            let ana = try server.bot(try server.token("ana", role: "host"))
            defer { ana.kill() }
            #expect(chatTexts(try ana.expect("joined")) == said)
            try ana.expect("error") { $0.string("code") == "not_saved" && $0.string("message") == cannotSave }
            ana.send(#"{"cmd":"chat","text":"read-only","id":5}"#)
            try ana.expect("chat") { $0.string("text") == "read-only" }
            said.append("read-only")
            disk.free()
            #expect(server.log.wait(timeout: 15) { $0.contains("the server is no longer read-only") } != nil)
            try ana.expect("error") { $0.string("code") == "saved" && $0.string("message") == savesAgain }
        }
        let again = try ServerProcess(directory: folder, launcher: disk.inside([]))
        defer { again.stop() }
        #expect(again.logLines(containing: "read-only").isEmpty)
        let fay = try again.bot(try again.token("fay", role: "audience"))
        defer { fay.kill() }
        #expect(chatTexts(try fay.expect("joined")) == said)
    }

    /// A crash, then a start on a full disk whose own writes fail (releasing the roles held at the crash): the
    /// server serves read-only, a speaker at the crash is a speaker again when it comes back, and the start's
    /// writes are done once there is room.
    @Test(
        .enabled(
            if: SmallFilesystem.unavailableReason == nil,
            "full-disk test skipped: \(SmallFilesystem.unavailableReason ?? "")"))
    func aStartOnAFullDiskAfterACrashGivesRolesBackAndFinishesOnceThereIsRoom() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-disk-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try SmallFilesystem(at: folder.appendingPathComponent("data").path, bytes: 4 * 1024 * 1024)
        defer { disk.stop() }
        let first = try ServerProcess(directory: folder, launcher: disk.inside([]))
        defer { first.crash() }
        let ana = try first.joinedBot("ana", role: "host")
        defer { ana.kill() }
        let eli = try first.joinedBot("eli", role: "audience")
        defer { eli.kill() }
        ana.send(#"{"cmd":"set_role","peer":"eli","role":"speaker"}"#)
        try eli.expect("role_changed") { $0.string("role") == "speaker" }
        let port = first.port
        first.crash()
        try eli.expect("reconnecting")
        try disk.fill()
        let second = try ServerProcess(directory: folder, port: port, launcher: disk.inside([]))
        defer { second.stop() }
        #expect(second.logLines(containing: "the server starts read-only: the server's disk is full").count == 1)
        let back = try eli.expect("reconnected", timeout: 20)
        #expect(back.object("self")?.string("role") == "speaker")
        #expect(back.bool("resumed") == true)
        disk.free()
        #expect(
            second.log.wait(timeout: 15) {
                $0.contains("the server is no longer read-only") && $0.contains("roles held at the start released: 1")
            } != nil)
        #expect(
            second.log.wait(timeout: 15) { $0.contains("changes are saved again (1 waiting changes saved)") } != nil)
        #expect(second.logLines(containing: "changes are saved again (1 waiting changes saved)").count == 1)
        second.stop()
        // Saved: the role the speaker took again after that start brings it back as a speaker after this one.
        let third = try ServerProcess(directory: folder, port: port, launcher: disk.inside([]))
        defer { third.stop() }
        #expect(third.logLines(containing: "read-only").isEmpty)
        let again = try eli.expect("reconnected", timeout: 20)
        #expect(again.object("self")?.string("role") == "speaker")
    }

    /// A crowd leaving at once is announced to those who stay in a few `peers_left`, each departure once.
    @Test func aCrowdLeavingAtOnceIsAnnouncedInAFewMessages() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        let observed = Mutex<[String]>([])
        let watcherLoop = try EventLoop(name: "test-watcher")
        defer { watcherLoop.shutdown() }
        let now = Int64(Date().timeIntervalSince1970)
        var headers = HTTPHeaders()
        headers.add(
            "Authorization",
            "Bearer "
                + (try server.signed(
                    TokenClaims(
                        subject: "watcher", name: "Watcher", room: "lobby", role: "host", expiresAt: now + 3600,
                        notBefore: now - 60))))
        var options = WebSocketOptions()
        options.maxMessageSize = ControlLimits.maxServerMessageBytes
        let watcher = try WebSocketClient.connect(
            to: server.url(), headers: headers, options: options, loop: watcherLoop,
            handler: WebSocketClient.Handler(onMessage: { payload in
                if case .text(let text) = payload { observed.withLock { $0.append(text) } }
            }))
        defer { watcher.close() }
        let crowd = try ListenerCrowd(server: server, count: 200)
        let joinedAll = waitUntil(limit: 30, every: 0.01) {
            // A gathered announcement goes to the joiners too, so the watcher may see its own join.
            Self.peers(in: observed.withLock { $0 }, type: ["peer_joined", "peers_joined"], key: "id")
                .filter { $0 != "watcher" }.count == 200
        }
        #expect(joinedAll)
        let before = observed.withLock { $0.count }
        crowd.leave()
        let leftAll = waitUntil(limit: 30, every: 0.01) {
            Self.peers(in: Array(observed.withLock { $0 }[before...]), type: ["peer_left", "peers_left"], key: "peer")
                .count == 200
        }
        #expect(leftAll)
        usleep(300_000)
        let departures = Array(observed.withLock { $0 }[before...]).filter {
            $0.contains(#""type":"peer_left""#) || $0.contains(#""type":"peers_left""#)
        }
        let peers = Self.peers(in: departures, type: ["peer_left", "peers_left"], key: "peer")
        #expect(peers.count == 200 && Set(peers).count == 200)
        // One message per departure before; now the departures of each 50 ms go in one.
        #expect(departures.count < 20, "\(departures.count) messages for 200 departures")
    }

    /// The identities the messages of these types name, in order.
    static func peers(in texts: [String], type: Set<String>, key: String) -> [String] {
        texts.flatMap { text -> [String] in
            guard case .object(let object)? = try? StrictJSONParser(maxBytes: 1 << 24).parse(text),
                case .string(let kind)? = object["type"], type.contains(kind)
            else { return [] }
            if case .array(let list)? = object["peers"] {
                return list.compactMap { value in
                    guard case .object(let entry) = value, case .string(let id)? = entry[key] else { return nil }
                    return id
                }
            }
            let field =
                kind == "peer_joined"
                ? object["peer"].flatMap { value -> JSONValue? in
                    if case .object(let peer) = value { return peer["id"] }
                    return nil
                } : object[key]
            if case .string(let id)? = field { return [id] }
            return []
        }
    }
}

/// The texts of a `joined` event's chat, oldest first.
func chatTexts(_ joined: JSONObject) -> [String] {
    (joined.array("chat") ?? []).compactMap { value -> String? in
        guard case .object(let message) = value else { return nil }
        return message.string("text")
    }
}
