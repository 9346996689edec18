import Foundation
import RoomTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Recording through a real server: a host's `R` reaches it, a recorder that joins is shown to everyone (the
/// REC mark on a second person's screen, the sentence in line mode, the event to a bot), and the host stops it
/// with `R` after the question.
@Suite(.ownThread, .serialized) struct RecordingEndToEndTests {
    /// The first line of a screen.
    func header(_ screen: String) -> String {
        String(screen.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }

    /// A listener on the screen (in a terminal of its own) and one in line mode, both in the room.
    func listeners(_ room: UIRoom, _ host: Tmux) throws -> (Tmux, Child) {
        let listener = Tmux(tmux: host.tmux)
        let command =
            [
                room.clubroom.path, "join", room.url, "--secret-file", room.secret, "--identity", "hana", "--name",
                "Hana",
            ]
            + ["--role", "audience"]
        try listener.start(width: 80, height: 24, command: command.joined(separator: " ") + "; sleep 30")
        try #require(
            eventually(10) { listener.screen().contains("you: Hana · listener") }, "no screen:\n\(listener.screen())")
        let plain = try Child(
            room.clubroom,
            [
                "join", room.url, "--secret-file", room.secret, "--identity", "fay", "--name", "Fay", "--role",
                "audience", "--plain",
            ])
        try #require(eventually(10) { plain.output.contents.contains("You joined lobby as Fay") })
        return (listener, plain)
    }

    /// The host's R starts the server's own recorder; everyone else sees it at once, and R again stops it after
    /// the question.
    @Test(.timeLimit(.minutes(1))) func aHostRecordsAndEveryoneSeesItUntilTheHostStops() throws {
        guard let room = try UIRoom() else { return }
        defer { room.close() }
        let eli = try room.bot("eli", name: "Eli")
        let host = room.tmux
        try room.joinAsHost(width: 80, height: 24)
        let (listener, plain) = try listeners(room, host)
        defer {
            listener.kill()
            plain.stop()
        }
        #expect(!header(listener.screen()).contains("REC"))

        try host.keys("R")
        let shown = eventually(15) { header(listener.screen()).hasPrefix(" ● REC Clubroom · lobby") }
        #expect(shown, "no REC on the listener's screen:\n\(listener.screen())")
        #expect(eventually(5) { header(host.screen()).hasPrefix(" ● REC ") }, "\(host.screen())")
        #expect(listener.screen().contains("Ana started recording this room."), "\(listener.screen())")
        #expect(eventually(5) { plain.output.contents.contains("Ana started recording this room.\n") })
        #expect(eventually(5) { eli.output.contents.contains(#"{"event":"recording","active":true,"by":"ana","#) })
        // The recorder is the REC mark, not a listener: Ana, Eli, Fay and Hana are here, three of them listening.
        #expect(header(listener.screen()).hasSuffix(" · 4 here"), "\(listener.screen())")
        #expect(section("Audience (3)", of: listener.screen()).count > 0, "\(listener.screen())")
        #expect(!plain.output.contents.contains(" joined."), "\(plain.output.contents)")

        try host.keys("R")
        #expect(eventually(5) { host.screen().contains("Stop recording?") }, "no question:\n\(host.screen())")
        try host.keys("y")
        let gone = eventually(10) {
            !header(listener.screen()).contains("REC") && listener.screen().contains("Ana stopped recording.")
        }
        #expect(gone, "the REC mark did not go:\n\(listener.screen())")
        #expect(
            eventually(5) { plain.output.contents.contains("Ana stopped recording.\n") }, "\(plain.output.contents)")
        #expect(eventually(5) { eli.output.contents.contains(#"{"event":"recording","active":false,"by":"ana"}"#) })
        #expect(eventually(5) { !header(host.screen()).contains("REC") }, "\(host.screen())")
        #expect(!plain.output.contents.contains("removed"), "\(plain.output.contents)")
    }

    /// A recorder run by hand (any participant of role recorder) is shown as well, and its leaving takes the mark
    /// away; a host whose locale is not UTF-8 (`LANG=C`) sees the ASCII mark.
    @Test(.timeLimit(.minutes(1))) func aRecorderRunByHandIsShownToo() throws {
        guard let room = try UIRoom() else { return }
        defer { room.close() }
        let host = room.tmux
        try room.joinAsHost(
            width: 80, height: 24, environment: ["LANG=C", "LC_ALL=C", "LC_CTYPE=C"], shows: "you: Ana | host")
        let (listener, plain) = try listeners(room, host)
        defer {
            listener.kill()
            plain.stop()
        }
        let recorder = try room.bot("rec", name: "Recorder", role: "recorder")
        #expect(eventually(10) { header(listener.screen()).hasPrefix(" ● REC ") }, "\(listener.screen())")
        #expect(eventually(5) { header(host.screen()).hasPrefix(" [REC] Clubroom | lobby") }, "\(host.screen())")
        #expect(eventually(5) { plain.output.contents.contains("Recorder started recording this room.\n") })
        #expect(!plain.output.contents.contains("Recorder joined."), "\(plain.output.contents)")
        recorder.stop()
        #expect(eventually(10) { !header(listener.screen()).contains("REC") }, "\(listener.screen())")
        #expect(eventually(5) { !header(host.screen()).contains("REC") }, "\(host.screen())")
        #expect(eventually(5) { plain.output.contents.contains("Recording stopped.\n") }, "\(plain.output.contents)")
        #expect(!plain.output.contents.contains("Recorder left."), "\(plain.output.contents)")
    }
}
