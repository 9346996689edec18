import Foundation
import Glibc
import RoomPersistence
import RoomTesting
import Testing

/// What `clubroom serve` does with its data folder: how it leaves it, how it makes it, and which damage stops it
/// before it serves anything.
@Suite(.ownThread) struct DataFolderTests {
    /// Runs `clubroom serve` on `folder` (through `launcher`, if any) and expects it to refuse to start: a non-zero
    /// exit and exactly one line on stderr, which it returns.
    func refusedStart(_ folder: URL, launcher: [String] = []) throws -> (status: Int32, lines: [String]) {
        let binary = try clubroomBinary()
        let arguments = [
            "serve", "--listen", "127.0.0.1:0", "--data", folder.appendingPathComponent("data").path,
            "--secret-file", folder.appendingPathComponent("secret").path,
        ]
        let child =
            launcher.isEmpty
            ? try ChildProcess(executable: binary, arguments: arguments)
            : try ChildProcess(
                executable: URL(fileURLWithPath: launcher[0]),
                arguments: Array(launcher.dropFirst()) + [binary.path] + arguments)
        let result = try child.finish(seconds: 15)
        return (result.status, result.standardError.split(separator: "\n").map(String.init))
    }

    /// A server that ran and was stopped, leaving its data folder behind.
    func folderOfAStoppedServer() throws -> URL {
        let server = try ServerProcess()
        let host = try server.joinedBot("host", role: "host")
        host.send(#"{"cmd":"chat","text":"hello"}"#)
        try host.expect("chat") { $0.string("text") == "hello" }
        host.kill()
        server.stop()
        return server.directory
    }

    /// The journal's `-wal` goes; the database and the link registry keep their `-wal`, emptied by the checkpoint,
    /// and their `-shm`, so that a start on a full disk can open them.
    @Test func aCleanStopCheckpointsAndClosesTheFiles() throws {
        let folder = try folderOfAStoppedServer()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("data").path
        let files = try FileManager.default.contentsOfDirectory(atPath: data)
        #expect(
            files.sorted() == [
                "clubroom-journal.sqlite3", "clubroom.sqlite3", "clubroom.sqlite3-shm", "clubroom.sqlite3-wal",
                "links.db", "links.db-shm", "links.db-wal",
            ])
        for wal in ["clubroom.sqlite3-wal", "links.db-wal"] {
            let size = try FileManager.default.attributesOfItem(atPath: data + "/" + wal)[.size] as? Int
            #expect(size == 0, "\(wal)")
        }
    }

    @Test func theFolderAndItsFilesAreTheOwnersOnly() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        func mode(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
        }
        #expect(try mode(server.dataDirectory) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory)
        #expect(files.contains("clubroom.sqlite3") && files.contains("clubroom-journal.sqlite3"))
        for file in files {
            #expect(try mode(server.dataDirectory + "/" + file) == 0o600, "\(file)")
        }
        #expect(server.logLines(containing: "can be read by every user").isEmpty)
    }

    @Test func aFolderEveryoneCanReadIsWarnedOfOnce() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("data"), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        let server = try ServerProcess(directory: folder)
        defer { server.stopAndClean() }
        let data = server.dataDirectory
        #expect(
            server.logLines(containing: "can be read by every user").map { $0.components(separatedBy: " WARN ").last }
                == [
                    "data directory \(data) can be read by every user of this machine (mode 755): it holds the rooms' "
                        + "chat and the secret that signs tokens; 'chmod 700 \(data)' makes it private"
                ])
    }

    /// A folder group or others may write to is refused: they could replace the database or the secret.
    @Test func aFolderOthersCanWriteToStopsTheStart() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-it-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("data").path
        for mode in [0o770, 0o707] {
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            #expect(chmod(data, mode_t(mode)) == 0)
            let (status, lines) = try refusedStart(folder)
            #expect(status != 0)
            #expect(lines.count == 1 && lines[0].contains("group or other users may write to it"), "\(lines)")
        }
    }

    /// The write check neither follows nor truncates a link planted under its name.
    @Test func theWriteCheckDoesNotFollowALinkPlantedUnderItsName() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-it-\(UUID().uuidString)")
        let data = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(
            at: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let target = folder.appendingPathComponent("precious")
        try Data("keep me".utf8).write(to: target)
        #expect(symlink(target.path, data.appendingPathComponent(".clubroom-write-check").path) == 0)
        let server = try ServerProcess(directory: folder)
        defer { server.stopAndClean() }
        #expect(try String(contentsOf: target, encoding: .utf8) == "keep me")
    }

    /// A secret that belongs to another user than the server's is refused: its owner could change it.
    @Test(.enabled(if: geteuid() == 0, "needs root to give the secret to another user"))
    func aSecretOfAnotherUserStopsTheStart() throws {
        let folder = try folderOfAStoppedServer()
        defer { try? FileManager.default.removeItem(at: folder) }
        let secret = folder.appendingPathComponent("secret").path
        #expect(chown(secret, 65534, 65534) == 0)
        let (status, lines) = try refusedStart(folder)
        #expect(status != 0)
        #expect(lines.count == 1 && lines[0].contains("belongs to user 65534"), "\(lines)")
    }

    @Test func aDatabaseWithScribbledPagesStopsTheStart() throws {
        let folder = try folderOfAStoppedServer()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("data/clubroom.sqlite3").path
        let file = try #require(FileHandle(forUpdatingAtPath: database))
        let size = try file.seekToEnd()
        // Every page after the first (which holds the schema) is overwritten, as a disk or a stray program would.
        try file.seek(toOffset: 4096)
        try file.write(contentsOf: Data((0..<Int(size) - 4096).map { UInt8(truncatingIfNeeded: $0 &* 131) }))
        try file.close()
        let (status, lines) = try refusedStart(folder)
        #expect(status == 1)
        #expect(lines.count == 1, "\(lines)")
        let expectedStart =
            "clubroom serve: database: database \(database): the file is damaged; SQLite's integrity_check says: "
        #expect(lines.first?.hasPrefix(expectedStart) == true, "\(lines)")
        #expect(
            lines.first?.hasSuffix(
                "(SQLite code 11); restore it from a backup, or move it away to start with an empty one") == true)
    }

    @Test func aDatabaseThatCannotBeOpenedStopsTheStart() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-it-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("data/clubroom.sqlite3")
        try FileManager.default.createDirectory(at: database, withIntermediateDirectories: true)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o700], ofItemAtPath: folder.appendingPathComponent("data").path)
        let (status, lines) = try refusedStart(folder)
        #expect(status == 1)
        #expect(
            lines == [
                "clubroom serve: database: database \(database.path): unable to open database file: Is a directory "
                    + "(SQLite code 14)"
            ])
    }

    @Test func aFullDiskStopsTheStart() throws {
        let probe = try ChildProcess(executable: URL(fileURLWithPath: "/usr/bin/unshare"), arguments: ["-m", "true"])
            .finish(seconds: 10)
        guard probe.status == 0 else {
            print("skipped: no mount namespace here (unshare -m: \(probe.standardError))")
            return
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-it-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("data").path
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        // A filesystem of three pages, all taken: the server's own, in a mount namespace of its own.
        let (status, lines) = try refusedStart(
            folder,
            launcher: [
                "/usr/bin/unshare", "-m", "/bin/sh", "-c",
                "mount -t tmpfs -o size=12k,mode=700 tmpfs \"$0\" && dd if=/dev/zero of=\"$0/fill\" bs=4k count=3 "
                    + "2>/dev/null; exec \"$@\"", data,
            ])
        #expect(status == 1)
        #expect(
            lines == [
                "clubroom serve: database: database \(data)/clubroom-journal.sqlite3: database or disk is full (SQLite "
                    + "code 13) while running: PRAGMA journal_mode = WAL"
            ])
    }

    @Test func aReadOnlyFolderStopsTheStart() throws {
        // A folder made read-only the way root cannot write it either: a read-only bind mount, in a mount
        // namespace of the server's own.
        let probe = try ChildProcess(executable: URL(fileURLWithPath: "/usr/bin/unshare"), arguments: ["-m", "true"])
            .finish(seconds: 10)
        guard probe.status == 0 else {
            print("skipped: no mount namespace here (unshare -m: \(probe.standardError))")
            return
        }
        let folder = try folderOfAStoppedServer()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("data").path
        let (status, lines) = try refusedStart(
            folder,
            launcher: [
                "/usr/bin/unshare", "-m", "/bin/sh", "-c",
                "mount --bind \"$0\" \"$0\" && mount -o remount,bind,ro \"$0\" && exec \"$@\"", data,
            ])
        #expect(status == 1)
        #expect(
            lines == [
                "clubroom serve: data directory \(data): the server cannot write there (Read-only file system); it "
                    + "keeps its database there"
            ])
    }
}
