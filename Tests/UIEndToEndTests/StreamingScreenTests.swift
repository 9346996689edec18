import Foundation
import RoomTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Streaming through a real server, as people see it: a host's `/stream tv` (a destination the server's operator
/// named; HLS into a folder, so no stream server is needed) puts `● LIVE` on every screen, beside `● REC` when
/// the room is recorded too, and says it in line mode; `/stream stop tv` takes it away.
@Suite(.ownThread, .serialized) struct StreamingScreenTests {
    func header(_ screen: String) -> String {
        String(screen.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }

    @Test(.timeLimit(.minutes(1))) func aHostStreamsAndEveryoneSeesLiveUntilTheHostStops() throws {
        let hls = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-ui-hls-\(getpid())").path
        try FileManager.default.createDirectory(atPath: hls, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: hls) }
        guard let room = try UIRoom(serveArguments: ["--stream", "tv=hls:" + hls]) else { return }
        defer { room.close() }
        let host = room.tmux
        try room.joinAsHost(width: 80, height: 24)
        let listener = Tmux(tmux: host.tmux)
        defer { listener.kill() }
        let command = [
            room.clubroom.path, "join", room.url, "--secret-file", room.secret, "--identity", "hana", "--name", "Hana",
            "--role", "audience",
        ]
        try listener.start(width: 80, height: 24, command: command.joined(separator: " ") + "; sleep 30")
        try #require(
            eventually(10) { listener.screen().contains("you: Hana · listener") }, "no screen:\n\(listener.screen())")
        let plain = try Child(
            room.clubroom,
            [
                "join", room.url, "--secret-file", room.secret, "--identity", "fay", "--name", "Fay", "--role",
                "audience", "--plain",
            ])
        defer { plain.stop() }
        try #require(eventually(10) { plain.output.contents.contains("You joined lobby as Fay") })
        #expect(!header(listener.screen()).contains("LIVE"))

        try host.keys("/stream tv", "Enter")
        #expect(
            eventually(15) { header(listener.screen()).hasPrefix(" ● LIVE Clubroom · lobby") },
            "no LIVE on the listener's screen:\n\(listener.screen())")
        #expect(eventually(5) { header(host.screen()).hasPrefix(" ● LIVE ") }, "\(host.screen())")
        #expect(
            eventually(5) { plain.output.contents.contains("Ana started streaming this room to tv.\n") },
            "\(plain.output.contents)")
        // The stream's recorder is counted nowhere: Ana, Fay and Hana are here.
        #expect(header(listener.screen()).hasSuffix(" · 3 here"), "\(listener.screen())")
        #expect(!plain.output.contents.contains(" joined."), "\(plain.output.contents)")
        // The host hears how the stream goes, in its own words.
        #expect(eventually(15) { host.screen().contains("Streaming to tv started.") }, "\(host.screen())")

        // Before anyone walks in: `clubroom rooms` names the stream, for scripts and for people.
        let server = room.url.replacingOccurrences(of: "/rooms/lobby", with: "")
        let json = spawnAndWait(room.clubroom.path, ["rooms", server, "--secret-file", room.secret, "--json"])
        #expect(json.output.contains(#","recording":false,"streaming":["tv"]}"#), "\(json.output)")
        let table = spawnAndWait(room.clubroom.path, ["rooms", server, "--secret-file", room.secret])
        #expect(table.output.contains("  LIVE  REC  STREAM  TOPIC\n"), "\(table.output)")
        #expect(table.output.contains("  no   tv      "), "\(table.output)")

        // Recorded as well: both marks, REC first.
        try host.keys("R")
        #expect(
            eventually(15) { header(listener.screen()).hasPrefix(" ● REC ● LIVE Clubroom") }, "\(listener.screen())")

        try host.keys("/stream stop tv", "Enter")
        #expect(
            eventually(10) { !header(listener.screen()).contains("LIVE") }, "LIVE stays:\n\(listener.screen())")
        #expect(
            eventually(5) { plain.output.contents.contains("Ana stopped streaming to tv.\n") },
            "\(plain.output.contents)")
        #expect(header(listener.screen()).hasPrefix(" ● REC Clubroom"), "\(listener.screen())")
    }
}
