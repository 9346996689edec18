import Foundation
import RoomTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Recording through a real server: a host's `R` reaches it, a recorder that joins is shown to everyone (the
/// REC mark on a second person's screen, the sentence in line mode, the event to a bot), and the host stops it
/// with `R` after the question.
@Suite(.serialized) struct RecordingEndToEndTests {
    /// The first line of a screen.
    func header(_ screen: String) -> String {
        String(screen.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }

    @Test(.timeLimit(.minutes(1))) func aRecordingIsShownToEveryoneAndTheHostStopsIt() throws {
        guard let room = try UIRoom() else { return }
        defer { room.close() }
        let eli = try room.bot("eli", name: "Eli")
        let host = room.tmux
        try room.joinAsHost(width: 80, height: 24)

        // R goes to the server at once; this server runs no recorder of its own and says how to record by hand.
        try host.keys("R")
        let answered = eventually(10) { host.screen().contains("This server does not run a recorder itself") }
        #expect(answered, "the server did not answer R:\n\(host.screen())")

        // A second person: a listener on the screen, and one in line mode.
        let listener = Tmux(tmux: host.tmux)
        defer { listener.kill() }
        let listenerCommand =
            [
                room.clubroom.path, "join", room.url, "--secret-file", room.secret, "--identity", "hana", "--name",
                "Hana",
            ]
            + ["--role", "audience"]
        try listener.start(width: 80, height: 24, command: listenerCommand.joined(separator: " ") + "; sleep 30")
        try #require(
            eventually(10) { listener.screen().contains("you: Hana · listener") }, "no screen:\n\(listener.screen())")
        #expect(!header(listener.screen()).contains("REC"))
        let plain = try Child(
            room.clubroom,
            [
                "join", room.url, "--secret-file", room.secret, "--identity", "fay", "--name", "Fay", "--role",
                "audience", "--plain",
            ])
        defer { plain.stop() }
        try #require(eventually(10) { plain.output.contents.contains("You joined lobby as Fay") })

        // A recorder run by hand (a participant of role recorder) joins: everyone is told.
        _ = try room.bot("rec", name: "Recorder", role: "recorder")
        let shown = eventually(10) { header(listener.screen()).hasPrefix(" ● REC Clubroom · lobby") }
        #expect(shown, "no REC on the listener's screen:\n\(listener.screen())")
        #expect(eventually(5) { header(host.screen()).hasPrefix(" ● REC ") }, "\(host.screen())")
        // The recorder is the REC mark, not a listener: Eli, Fay and Hana listen; Ana, Eli, Fay, Hana are here.
        #expect(header(listener.screen()).hasSuffix(" · 4 here"), "\(listener.screen())")
        #expect(!section("Audience", of: listener.screen()).joined().contains("Recorder"), "\(listener.screen())")
        #expect(eventually(5) { plain.output.contents.contains("Recorder started recording this room.\n") })
        #expect(!plain.output.contents.contains("Recorder joined."), "\(plain.output.contents)")
        #expect(eventually(5) { eli.output.contents.contains(#"{"event":"recording","active":true,"by":"rec","#) })

        // The host stops it, after the question.
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
        #expect(!header(host.screen()).contains("REC"))
    }
}
