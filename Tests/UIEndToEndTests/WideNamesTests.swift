import Foundation
import RoomTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// glibc's `wcwidth`, which the Glibc module does not declare (it needs _XOPEN_SOURCE).
let systemWidth: @convention(c) (wchar_t) -> Int32 = {
    setlocale(LC_CTYPE, "C.UTF-8")
    guard let symbol = dlsym(nil, "wcwidth") else { fatalError("no wcwidth in the C library") }
    return unsafeBitCast(symbol, to: (@convention(c) (wchar_t) -> Int32).self)
}()

/// The columns a line of `tmux capture-pane` takes, by `wcwidth` as ncurses and tmux count them.
func terminalWidth(_ line: Substring) -> Int {
    line.unicodeScalars.reduce(0) { $0 + max(0, Int(systemWidth(wchar_t(bitPattern: $1.value)))) }
}

/// The columns (by `wcwidth`) at which `mark` starts in `line`.
func columns(of mark: Unicode.Scalar, in line: Substring) -> [Int] {
    var found: [Int] = []
    var column = 0
    for scalar in line.unicodeScalars {
        if scalar == mark { found.append(column) }
        column += max(0, Int(systemWidth(wchar_t(bitPattern: scalar.value))))
    }
    return found
}

/// Names that terminals draw at different widths (ZWJ families, skin tones, VS16, flags, a lone regional
/// indicator, a Unicode 15 emoji, an Indic cluster) in a real room on the real screen in tmux: every row keeps
/// to the screen's width and nothing spills over the section titles.
@Suite(.ownThread, .serialized) struct WideNamesTests {
    static let speakers = [
        "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466} Family", "\u{1F44D}\u{1F3FD} Thumbs",
        "\u{2764}\u{FE0F} Heart", "\u{1F3F3}\u{FE0F}\u{200D}\u{1F308} Pride", "\u{1F1EF}\u{1F1F5} Aki",
        "\u{1F469}\u{1F3FD}\u{200D}\u{1F4BB} Dev", "\u{1FAE8} Shake",
    ]
    static let listeners = ["\u{1F1EB} Lone", "\u{915}\u{94D}\u{937}\u{93E} Indic"]
    /// How the screen writes each name: what every terminal advances alike (docs/ui.md, "Width").
    static let drawn = [
        "\u{1F468} Family", "\u{1F44D} Thumbs", "\u{2764} Heart", "\u{1F3F3} Pride", "\u{1F1EF}\u{1F1F5} Aki",
        "\u{1F469} Dev", "\u{FFFD} Shake", "F Lone", "\u{915}\u{94D}\u{937}\u{93E} Indic",
    ]

    /// A server on loopback with a bot in the room for each of `people` (name and role), and the room screen of
    /// Ana, a host, in tmux at `width` x `height`; `body` gets the tmux pane and the bots, in order.
    static func withRoom(
        _ people: [(String, String)], width: Int, height: Int, _ body: (Tmux, [Child]) throws -> Void
    ) throws {
        guard let tmuxPath = which("tmux") else {
            Issue.record("tmux is not installed; the end-to-end test needs it (apt-get install tmux)")
            return
        }
        let clubroom = try clubroomExecutable()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-wide-names-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secret = directory.appendingPathComponent("secret").path
        let tmux = Tmux(tmux: tmuxPath)
        var children: [Child] = []
        defer {
            tmux.kill()
            for child in children { child.stop() }
            try? FileManager.default.removeItem(at: directory)
        }
        let server = try Child(
            clubroom,
            [
                "serve", "--listen", "127.0.0.1:0", "--data", directory.appendingPathComponent("data").path,
                "--secret-file", secret,
            ])
        children.append(server)
        var port = ""
        let listening = eventually(10) {
            guard let range = server.errors.contents.range(of: "listening on ws://127.0.0.1:") else { return false }
            port = String(server.errors.contents[range.upperBound...].prefix(while: \.isNumber))
            return !port.isEmpty
        }
        try #require(listening, "the server did not start: \(server.errors.contents)")
        let url = "ws://127.0.0.1:\(port)/rooms/lobby"

        for (index, (name, role)) in people.enumerated() {
            let token = spawnAndWait(
                clubroom.path,
                [
                    "token", "--room", "lobby", "--identity", "p\(index)", "--name", name, "--role", role,
                    "--secret-file", secret,
                ]
            ).output.trimmingCharacters(in: .whitespacesAndNewlines)
            let bot = try Child(clubroom, ["bot", url, "--token", token])
            children.append(bot)
            try #require(eventually(10) { bot.output.contents.contains("\"joined\"") }, "\(name) did not join")
        }

        try tmux.start(
            width: width, height: height,
            command: "\(clubroom.path) join \(url) --secret-file \(secret) --identity ana --name Ana --role host "
                + "--output null --input null; sleep 30")
        try body(tmux, Array(children.dropFirst()))
    }

    @Test(.timeLimit(.minutes(1))) func emojiNamesDrawWithNothingSpilling() throws {
        let people = Self.speakers.map { ($0, "speaker") } + Self.listeners.map { ($0, "audience") }
        try Self.withRoom(people, width: 80, height: 24) { tmux, _ in
            try Self.checkEmojiNames(tmux)
        }
    }

    static func checkEmojiNames(_ tmux: Tmux) throws {
        let complete = eventually(15) {
            let screen = tmux.screen()
            return screen.contains("you: Ana · host") && drawn.allSatisfy { screen.contains($0) }
        }
        let screen = tmux.screen()
        #expect(complete, "not every name is on the screen as the screen writes it:\n\(screen)")
        let rows = screen.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, row) in rows.enumerated() {
            #expect(terminalWidth(row) <= 80, "row \(index) is \(terminalWidth(row)) columns wide:\n\(screen)")
        }
        #expect(rows.count >= 24)
        #expect(
            rows.dropFirst().first.map(String.init) == " ─ Stage " + String(repeating: "─", count: 71),
            "the stage's title is not intact:\n\(screen)")
        let audienceTitle = " ─ Audience (2) "
        #expect(
            rows.contains { $0 == audienceTitle + String(repeating: "─", count: 80 - audienceTitle.count) },
            "the audience's title is not intact:\n\(screen)")
        #expect(
            rows.contains { $0.hasPrefix(" mic muted · you: Ana · host") }, "the status line is not intact:\n\(screen)")
        // Every stage row's level bars and microphone marks stand in the same two columns.
        let stage = section("Stage", of: screen).filter { !$0.isEmpty }
        #expect(stage.count == 4, "\(screen)")
        for row in stage {
            #expect(columns(of: "▁", in: row[...]) == columns(of: "▁", in: stage[0][...]), "bars move:\n\(screen)")
            #expect(columns(of: "🔇", in: row[...]) == columns(of: "🔇", in: stage[0][...]), "marks move:\n\(screen)")
        }
        #expect(columns(of: "🔇", in: stage[0][...]).count == 2, "\(screen)")

        // On a small screen the names are cut, still to the screen's width.
        tmux.resize(width: 40, height: 12)
        let small = eventually(5) { tmux.screen().split(separator: "\n").first.map { $0.hasPrefix(" lobby") } ?? false }
        let smallScreen = tmux.screen()
        #expect(small, "no redraw at 40x12:\n\(smallScreen)")
        let smallRows = smallScreen.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, row) in smallRows.enumerated() {
            #expect(terminalWidth(row) <= 40, "row \(index) is \(terminalWidth(row)) columns wide:\n\(smallScreen)")
        }
        #expect(
            smallRows.dropFirst().first.map(String.init) == " ─ Stage " + String(repeating: "─", count: 31),
            "the stage's title is not intact:\n\(smallScreen)")
        let smallStage = section("Stage", of: smallScreen).filter { !$0.isEmpty }
        for row in smallStage {
            #expect(columns(of: "🔇", in: row[...]) == columns(of: "🔇", in: smallStage[0][...]), "\(smallScreen)")
        }
    }

    /// Names of every kind the screen must keep to the screen's width (flags, ZWJ families, skin tones, keycaps,
    /// VS16, and the characters this machine's `wcwidth` gives two columns where Unicode 15 gives one), several
    /// to a name, at 100x30: every row of the pane stays within 100 columns by tmux's own count (the cursor after
    /// each row, as tmux advances it, is what `wcwidth` sums), the title row ends with the connection's dot, and
    /// the stage's title and the status line are intact.
    @Test(.timeLimit(.minutes(1))) func everyKindOfSequenceKeepsEveryRowWithin100Columns() throws {
        let people = [
            ("🇯🇵🇺🇸🇫🇷🇩🇪 Flags", "moderator"), ("👨‍👩‍👧‍👦👨‍👩‍👧👩‍👩‍👦 Family", "speaker"),
            ("👍🏽👋🏿🤝🏻 Tones", "speaker"), ("1️⃣#️⃣*️⃣ Keycaps", "speaker"), ("❤️☀️✔️ Vs16", "speaker"),
            ("䷀䷁䷂䷃䷄䷅䷆䷇䷈䷉䷊䷋ Hexagrams", "speaker"), ("㉈㉉㉊㉋㉌㉍㉎㉏ Circled", "audience"),
            ("🏳️‍🌈🏴‍☠️👩🏽‍💻 Mixed", "audience"),
        ]
        let topic = people.map(\.0).joined(separator: " ")
        try Self.withRoom(people, width: 100, height: 30) { tmux, bots in
            let shown = eventually(15) {
                let screen = tmux.screen()
                return screen.contains("you: Ana · host") && screen.contains("Mixed") && screen.contains("Hexa")
            }
            // The moderator's bot sets it: typed into tmux, the joiners and selectors would not all arrive.
            bots[0].write(#"{"cmd":"topic","text":"\#(topic)"}"#)
            let retitled = eventually(5) {
                tmux.screen().split(separator: "\n").first.map { $0.contains("Flags") } ?? false
            }
            let screen = tmux.screen()
            #expect(shown && retitled, "the room is not on the screen:\n\(screen)")
            let rows = screen.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(rows.count >= 30, "\(screen)")
            for (index, row) in rows.enumerated() {
                #expect(terminalWidth(row) <= 100, "row \(index) is \(terminalWidth(row)) columns wide:\n\(screen)")
            }
            #expect(
                rows.dropFirst().first.map(String.init) == " ─ Stage " + String(repeating: "─", count: 91),
                "the stage's title is not intact:\n\(screen)")
            #expect(rows.first?.hasSuffix("●") == true, "the title row does not end with its dot:\n\(screen)")
            #expect(rows.contains { $0.hasPrefix(" mic muted · you: Ana · host") }, "\(screen)")
            let stage = section("Stage", of: screen).filter { !$0.isEmpty }
            #expect(stage.count == 4, "\(screen)")
            for row in stage {
                let bars = columns(of: "▁", in: row[...])
                #expect(
                    !bars.isEmpty && columns(of: "▁", in: stage[0][...]).starts(with: bars), "bars move:\n\(screen)")
            }
        }
    }
}
