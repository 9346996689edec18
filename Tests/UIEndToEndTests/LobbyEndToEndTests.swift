import Foundation
import RoomTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The lobby for real: `clubroom serve`, bots starting and ending rooms, and `clubroom join LINK` in tmux and in
/// line mode, `clubroom rooms`, and links of both kinds made by `clubroom invite`.
@Suite(.ownThread, .serialized) struct LobbyEndToEndTests {
    /// A server with a folder of its own; each client gets a state folder of its own (its guest key).
    final class Server {
        let clubroom: URL
        let directory: URL
        let secret: String
        let port: String
        private(set) var children: [Child] = []

        init() throws {
            clubroom = try clubroomExecutable()
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "clubroom-lobby-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            secret = directory.appendingPathComponent("secret").path
            let server = try Child(
                clubroom,
                [
                    "serve", "--listen", "127.0.0.1:0", "--data", directory.appendingPathComponent("data").path,
                    "--secret-file", secret,
                ])
            children.append(server)
            var found = ""
            let listening = eventually(10) {
                guard let range = server.errors.contents.range(of: "listening on ws://127.0.0.1:") else { return false }
                found = String(server.errors.contents[range.upperBound...].prefix(while: \.isNumber))
                return !found.isEmpty
            }
            port = found
            guard listening else {
                close()
                throw HarnessError("the server did not start: \(server.errors.contents)")
            }
        }

        var address: String { "ws://127.0.0.1:\(port)" }

        /// `clubroom invite` with these arguments: the link it prints.
        func invite(_ arguments: [String] = []) throws -> String {
            let made = spawnAndWait(clubroom.path, ["invite", address, "--secret-file", secret] + arguments)
            try #require(made.status == 0, "clubroom invite failed: \(made.output)")
            let link = made.output.trimmingCharacters(in: .whitespacesAndNewlines)
            try #require(!link.contains("\n"), "more than one line: \(made.output)")
            return link
        }

        /// A bot joined to `room` with a room token for `identity`.
        func bot(_ identity: String, name: String, room: String, role: String = "host") throws -> Child {
            let token = spawnAndWait(
                clubroom.path,
                [
                    "token", "--room", room, "--identity", identity, "--name", name, "--role", role, "--secret-file",
                    secret,
                ]
            ).output.trimmingCharacters(in: .whitespacesAndNewlines)
            let bot = try Child(clubroom, ["bot", "\(address)/rooms/\(room)", "--token", token])
            children.append(bot)
            try #require(eventually(10) { bot.output.contents.contains("\"joined\"") }, "the bot did not join")
            return bot
        }

        /// A client process with a state folder of its own.
        func client(_ arguments: [String], state: String) throws -> Child {
            let child = try Child(
                clubroom, arguments,
                environment: ["XDG_STATE_HOME": directory.appendingPathComponent(state).path])
            children.append(child)
            return child
        }

        func close() {
            for child in children { child.stop() }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// A bot starts a room and it appears in the lobby, in place; Enter joins it; `q` comes back to the lobby;
    /// a room that ends is announced; `q` in the lobby quits.
    @Test(.timeLimit(.minutes(2))) func aRoomAppearsEnterJoinsAndQComesBack() throws {
        guard let tmuxPath = which("tmux") else {
            Issue.record("tmux is not installed; the end-to-end test needs it (apt-get install tmux)")
            return
        }
        let server = try Server()
        let tmux = Tmux(tmux: tmuxPath)
        defer {
            tmux.kill()
            server.close()
        }
        let link = try server.invite()
        let state = server.directory.appendingPathComponent("hana").path
        try tmux.start(
            width: 80, height: 24,
            command: "XDG_STATE_HOME=\(state) \(server.clubroom.path) join \(link) --name Hana --output null; "
                + "echo \"clubroom exited with $?\"; sleep 30")
        #expect(
            eventually(10) { tmux.screen().contains("No live rooms right now") }, "no empty lobby:\n\(tmux.screen())")
        // Issue 27 (polish): the empty lobby says what a person can do there.
        let empty = tmux.screen()
        #expect(empty.contains("Have a link to a room? Press q, then run: clubroom join LINK"), "\(empty)")
        // A listener's server link may not open rooms here (`--open-rooms hosts`, the default): it says who may.
        #expect(
            empty.contains("On this server, people with a host's lobby link start rooms (n); ask a host"), "\(empty)")
        #expect(empty.contains("Or wait here for one to start. q quits."), "\(empty)")

        let ana = try server.bot("ana", name: "Ana", room: "jazz")
        ana.write(#"{"cmd":"topic","text":"Late night jazz"}"#)
        let appeared = eventually(10) {
            let screen = tmux.screen()
            return section("Live rooms (1)", of: screen).contains {
                $0.contains("Late night jazz") && $0.contains("0 listening")
            }
                && section("Live rooms (1)", of: screen).contains {
                    $0.contains("★ Ana on stage") && $0.contains("jazz")
                }
        }
        #expect(appeared, "the room did not appear:\n\(tmux.screen())")
        #expect(tmux.screen().contains("Room started: "), "no announcement:\n\(tmux.screen())")

        try tmux.keys("Enter")
        let inRoom = eventually(10) { tmux.screen().contains("you: Hana · listener") }
        #expect(inRoom, "Enter did not join:\n\(tmux.screen())")
        #expect(eventually(5) { ana.output.contents.contains(#""name":"Hana""#) }, "\(ana.output.contents)")

        try tmux.keys("q")
        let back = eventually(10) {
            let screen = tmux.screen()
            return screen.contains("Live rooms (1)") && !screen.contains("you: Hana")
        }
        #expect(back, "q did not come back to the lobby:\n\(tmux.screen())")
        #expect(eventually(5) { ana.output.contents.contains("\"peer_left\"") })

        // Another room starts and its host ends it: both are announced, and the list is as it was.
        let bo = try server.bot("bo", name: "Bo", room: "rust")
        #expect(eventually(10) { tmux.screen().contains("Live rooms (2)") }, "\(tmux.screen())")
        bo.write(#"{"cmd":"end_room"}"#)
        let ended = eventually(10) {
            let screen = tmux.screen()
            return screen.contains("Room ended: rust.") && screen.contains("Live rooms (1)")
        }
        #expect(ended, "the ended room was not announced:\n\(tmux.screen())")

        try tmux.keys("q")
        #expect(eventually(10) { tmux.screen().contains("clubroom exited with 0") }, "\(tmux.screen())")
    }

    /// Line mode: the lobby as sentences; a number joins, `/leave` comes back, `/quit` leaves.
    @Test(.timeLimit(.minutes(1))) func theLobbyInLineMode() throws {
        let server = try Server()
        defer { server.close() }
        let ana = try server.bot("ana", name: "Ana", room: "jazz")
        ana.write(#"{"cmd":"topic","text":"Late night jazz"}"#)
        #expect(eventually(5) { ana.output.contents.contains("\"topic_changed\"") })
        let lobby = try server.client(
            ["join", try server.invite(), "--plain", "--name", "Ivo", "--output", "null"], state: "ivo")
        let listed = eventually(10) {
            lobby.output.contents.contains(
                "Lobby of 127.0.0.1:\(server.port). 1 live room, most listeners first:\n"
                    + "1. Late night jazz (jazz): 0 listening; on stage: Ana (host); started just now.")
        }
        #expect(listed, "\(lobby.output.contents)\n\(lobby.errors.contents)")
        lobby.write("1")
        #expect(
            eventually(10) { lobby.output.contents.contains("You joined jazz as Ivo (listener).") },
            "\(lobby.output.contents)")
        lobby.write("/leave")
        #expect(
            eventually(10) { lobby.output.contents.contains("Back in the lobby, from jazz.") },
            "\(lobby.output.contents)")
        let bo = try server.bot("bo", name: "Bo", room: "rust")
        #expect(
            eventually(10) { lobby.output.contents.contains("Room started: rust. Bo (host) on stage.") },
            "\(lobby.output.contents)")
        bo.write(#"{"cmd":"end_room"}"#)
        #expect(eventually(10) { lobby.output.contents.contains("Room ended: rust.") }, "\(lobby.output.contents)")
        lobby.write("/quit")
        #expect(eventually(10) { !lobby.process.isRunning })
        #expect(lobby.process.terminationStatus == 0)
        #expect(lobby.output.contents.hasSuffix("Leaving the lobby.\n"))
    }

    /// `clubroom rooms --json` for scripts, and the table for people.
    @Test(.timeLimit(.minutes(1))) func roomsPrintsTheListOnce() throws {
        let server = try Server()
        defer { server.close() }
        let ana = try server.bot("ana", name: "Ana", room: "jazz")
        _ = try server.bot("eli", name: "Eli", room: "jazz", role: "audience")
        ana.write(#"{"cmd":"topic","text":"Late night jazz"}"#)
        #expect(eventually(5) { ana.output.contents.contains("\"topic_changed\"") })
        let link = try server.invite()
        let json = spawnAndWait(server.clubroom.path, ["rooms", link, "--json"])
        #expect(json.status == 0)
        let prefix =
            #"{"server":"ws://127.0.0.1:\#(server.port)","rooms":[{"name":"jazz","topic":"Late night jazz","stage":[{"name":"Ana","role":"host"}],"on_stage":1,"listeners":1,"raised_hands":0,"started_at":"#
        #expect(json.output.hasPrefix(prefix), "\(json.output)")
        #expect(json.output.hasSuffix(#","recording":false,"streaming":[]}]}"# + "\n"), "\(json.output)")
        let table = spawnAndWait(server.clubroom.path, ["rooms", server.address, "--secret-file", server.secret])
        #expect(table.status == 0)
        let lines = table.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(table.output)")
        #expect(lines.first == "1 live room on 127.0.0.1:\(server.port), most listeners first:")
        #expect(lines.dropFirst().first == "ROOM  LISTENING  ON STAGE  HANDS  LIVE  REC  STREAM  TOPIC")
        #expect(lines.last == "jazz          1         1      0  now   no   -       Late night jazz")
        // Without an invite: the reason, and exit status 1.
        let refused = spawnAndWait(server.clubroom.path, ["rooms", server.address, "--token", "x.y.z"])
        #expect(refused.status == 1)
    }

    /// A room link opens one room as it is pasted; a malformed link says what is wrong with it.
    @Test(.timeLimit(.minutes(1))) func aRoomLinkOpensItsRoom() throws {
        let server = try Server()
        defer { server.close() }
        let ana = try server.bot("ana", name: "Ana", room: "jazz")
        let link = try server.invite(["--room", "jazz", "--role", "speaker"])
        #expect(link.hasPrefix("ws://127.0.0.1:\(server.port)/rooms/jazz#invite=ey"), "\(link)")
        let guest = try server.client(
            ["join", "<\(link)>.", "--plain", "--name", "Dara", "--input", "null", "--output", "null"], state: "dara")
        #expect(
            eventually(10) { guest.output.contents.contains("You joined jazz as Dara (speaker).") },
            "\(guest.output.contents)\n\(guest.errors.contents)")
        #expect(
            eventually(5) { ana.output.contents.contains(#""name":"Dara","role":"speaker""#) }, "\(ana.output.contents)"
        )
        guest.write("/leave")
        #expect(eventually(10) { !guest.process.isRunning })

        let broken = try server.client(
            ["join", link.replacingOccurrences(of: "#invite=", with: "#token="), "--plain"], state: "x")
        #expect(eventually(10) { !broken.process.isRunning })
        #expect(broken.process.terminationStatus == 1)
        #expect(
            broken.errors.contents
                == "clubroom join: This is not a Clubroom link: the part after # is not invite=TOKEN.\n")

        // A link from another server: refused before any screen, in words about the link.
        let otherSecret = server.directory.appendingPathComponent("other-secret").path
        #expect(
            FileManager.default.createFile(
                atPath: otherSecret, contents: Data((String(repeating: "5a", count: 32) + "\n").utf8),
                attributes: [.posixPermissions: 0o600]))
        let elsewhere = spawnAndWait(server.clubroom.path, ["invite", server.address, "--secret-file", otherSecret])
        let foreign = try server.client(
            ["join", elsewhere.output.trimmingCharacters(in: .whitespacesAndNewlines), "--plain"], state: "z")
        #expect(eventually(10) { !foreign.process.isRunning })
        #expect(foreign.process.terminationStatus == 1)
        #expect(
            foreign.errors.contents
                == "clubroom join: This link was made for another Clubroom server, not this one. Check the address, or ask for a link to this server.\n",
            "\(foreign.errors.contents)")

        // A server link for a room the lobby does not show: a plain refusal.
        let unlisted = try server.client(
            ["join", try server.invite().replacingOccurrences(of: "/rooms#", with: "/rooms/nowhere#"), "--plain"],
            state: "y")
        #expect(eventually(10) { !unlisted.process.isRunning })
        #expect(unlisted.process.terminationStatus == 1)
        #expect(
            unlisted.errors.contents.contains("This server's lobby has no live room by that name"),
            "\(unlisted.errors.contents)")
    }

    /// Issue 27 (H2): a host link in one terminal and the lobby link in another made the host a listener, closed
    /// the first terminal and left the room without a host; `--name Bea` was ignored. One account is one person
    /// and keeps its place; `--profile NAME` is another person on the same machine.
    @Test(.timeLimit(.minutes(1))) func aSecondTerminalKeepsTheRoleAndAProfileIsSomeoneElse() throws {
        let server = try Server()
        defer { server.close() }
        let ana = try server.bot("ana", name: "Ana", room: "jazz")
        let hostLink = try server.invite(["--room", "jazz", "--role", "host"])
        let first = try server.client(
            ["join", hostLink, "--plain", "--name", "Ana2", "--input", "null", "--output", "null"], state: "me")
        #expect(
            eventually(10) { first.output.contents.contains("You joined jazz as Ana2 (host).") },
            "\(first.output.contents)\n\(first.errors.contents)")
        let lobbyLink = try server.invite().replacingOccurrences(of: "/rooms#", with: "/rooms/jazz#")
        let second = try server.client(
            ["join", lobbyLink, "--plain", "--name", "Bea", "--input", "null", "--output", "null"], state: "me")
        #expect(
            eventually(10) { second.output.contents.contains("You joined jazz as Ana2 (host).") },
            "\(second.output.contents)\n\(second.errors.contents)")
        #expect(eventually(10) { !first.process.isRunning })
        #expect(
            first.output.contents.contains(
                "You joined this room from somewhere else as the same person (another terminal of this account), so "
                    + "this screen was closed. To be two people on one machine, join with --profile NAME."),
            "\(first.output.contents)\n\(first.errors.contents)")
        #expect(!ana.output.contents.contains(#""role":"audience""#), "\(ana.output.contents)")
        let bea = try server.client(
            ["join", lobbyLink, "--plain", "--profile", "bea", "--name", "Bea", "--input", "null", "--output", "null"],
            state: "me")
        #expect(
            eventually(10) { bea.output.contents.contains("You joined jazz as Bea (listener).") },
            "\(bea.output.contents)\n\(bea.errors.contents)")
        #expect(second.process.isRunning, "a profile is someone else: the other terminal stays")
        #expect(
            FileManager.default.fileExists(
                atPath: server.directory.appendingPathComponent("me/clubroom/profiles/bea/guest-key").path))
        second.write("/leave")
        bea.write("/leave")
    }

    /// Issue 27 (M1): a newcomer arriving mid-conversation saw none of what was just said. The event pane shows
    /// it above the join line, marked as earlier.
    @Test(.timeLimit(.minutes(1))) func aNewcomerSeesTheEarlierChatAboveTheJoinLine() throws {
        guard let tmuxPath = which("tmux") else {
            Issue.record("tmux is not installed; the end-to-end test needs it (apt-get install tmux)")
            return
        }
        let server = try Server()
        let tmux = Tmux(tmux: tmuxPath)
        defer {
            tmux.kill()
            server.close()
        }
        let ana = try server.bot("ana", name: "Ana", room: "jazz")
        ana.write(#"{"cmd":"chat","text":"we were just talking about Coltrane"}"#)
        #expect(eventually(10) { ana.output.contents.contains("Coltrane") })
        let link = try server.invite(["--room", "jazz"])
        let state = server.directory.appendingPathComponent("kai").path
        try tmux.start(
            width: 80, height: 24,
            command: "XDG_STATE_HOME=\(state) \(server.clubroom.path) join \(link) --name Kai --output null; sleep 30")
        #expect(eventually(10) { tmux.screen().contains("You joined jazz as Kai") }, "\(tmux.screen())")
        let lines = tmux.screen().split(separator: "\n").map(String.init)
        let earlier = lines.firstIndex { $0.contains("Earlier in the room, before you joined:") }
        let said = lines.firstIndex { $0.contains("Ana: we were just talking about Coltrane") }
        let joinedLine = lines.firstIndex { $0.contains("You joined jazz as Kai") }
        #expect(earlier != nil && said != nil && joinedLine != nil, "\(tmux.screen())")
        if let earlier, let said, let joinedLine { #expect(earlier < said && said < joinedLine, "\(tmux.screen())") }
    }

    /// Issue 27: with a host's server link, the empty lobby offers `n`; `n` asks for a name and a topic, the
    /// server opens the room, and the person is its host on the same screen; another lobby sees the room start.
    @Test(.timeLimit(.minutes(2))) func nInTheLobbyOpensARoomWithYouAsItsHost() throws {
        guard let tmuxPath = which("tmux") else {
            Issue.record("tmux is not installed; the end-to-end test needs it (apt-get install tmux)")
            return
        }
        let server = try Server()
        let tmux = Tmux(tmux: tmuxPath)
        defer {
            tmux.kill()
            server.close()
        }
        let link = try server.invite(["--role", "host"])
        let state = server.directory.appendingPathComponent("hana").path
        try tmux.start(
            width: 80, height: 24,
            command: "XDG_STATE_HOME=\(state) \(server.clubroom.path) join \(link) --name Hana --output null; "
                + "echo \"clubroom exited with $?\"; sleep 30")
        #expect(
            eventually(10) { tmux.screen().contains("Press n to start a room") }, "no offer:\n\(tmux.screen())")
        #expect(tmux.screen().contains("n new room"), "\(tmux.screen())")
        try tmux.keys("n")
        #expect(eventually(5) { tmux.screen().contains("Open a room") }, "no dialog:\n\(tmux.screen())")
        try tmux.keys("jazz", "Enter")
        try tmux.keys("Late night jazz")
        #expect(
            eventually(5) { tmux.screen().contains("Topic: Late night jazz") }, "no topic:\n\(tmux.screen())")
        try tmux.keys("Enter")
        let hosting = eventually(10) {
            let screen = tmux.screen()
            return screen.contains("you: Hana · host") && screen.contains("\"Late night jazz\"")
        }
        #expect(hosting, "not the new room's host:\n\(tmux.screen())")
        // The room is a room like any other: listed once its host is in it.
        let listener = try server.invite()
        var table = ""
        #expect(
            eventually(10) {
                table = spawnAndWait(server.clubroom.path, ["rooms", listener]).output
                return table.contains("Late night jazz")
            }, "\(table)")
        #expect(table.contains("jazz"), "\(table)")
    }
}
