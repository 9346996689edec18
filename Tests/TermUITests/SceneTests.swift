import RoomTesting
import Testing

@testable import TermUI

@Suite("Room screen goldens")
struct SceneTests {
    @Test func sketchRoom() {
        expectGolden("sketch-80x24", render(Scenes.sketch()))
    }

    @Test func emptyRoom() {
        let model = RoomScreenModel(
            header: .init(room: "lobby", peopleCount: 1, connection: .connected(roundTripMilliseconds: 3)),
            stage: [.init(name: "Ana", role: .host, muted: true)],
            status: .init(name: "Ana", role: .host, micMuted: true, hints: Scenes.stageHints(muted: true)))
        expectGolden("empty-80x24", render(model))
    }

    @Test func fullStage() {
        let names = ["Ana", "Bo", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea"]
        var stage = names.enumerated().map { index, name in
            RoomScreenModel.StageEntry(
                name: name, role: index == 0 ? .host : index < 3 ? .moderator : .speaker, muted: index % 4 == 3,
                level: (index * 37) % 101, speaking: index == 4)
        }
        stage[5].name = "Fay Featherstonehaugh-Wolfeschlegel"
        var model = Scenes.sketch()
        model.stage = stage
        model.selection = .stage(11)
        model.chat = [
            .event("Eli became a speaker"), .message(from: "Ana", text: "welcome, everyone", to: nil),
        ]
        expectGolden("full-stage-80x24", render(model))
    }

    @Test func longHandQueue() {
        var model = Scenes.sketch()
        model.hands = .full(
            Scenes.names(40).enumerated().map { .init(position: $0 + 1, name: $1, waitingSeconds: 4000 - $0 * 97) })
        model.selection = .hand(31)
        expectGolden("long-queue-80x24", render(model))
    }

    @Test func largeAudience() {
        var model = Scenes.sketch()
        model.header.peopleCount = 2004
        model.audience = Scenes.names(2000)
        model.audienceCount = 2000
        model.selection = .audience(1000)
        expectGolden("audience-2000-80x24", render(model))
    }

    @Test func listenerWithHandUpAndChat() {
        var model = Scenes.sketch()
        model.hands = .ownPlace(position: 2, total: 3)
        model.status = .init(name: "Fay", role: .audience, handRaised: true, hints: Scenes.handUpHints)
        model.selection = .none
        model.chatVisible = true
        model.chat = [
            .event("Gus joined"),
            .message(
                from: "Ana", text: "Thanks for coming! Raise a hand with r if you want to ask something.",
                to: nil),
            .message(from: "Bo", text: "you're next after Eli", to: "you"),
            .event("Eli was invited to speak by Ana"),
        ]
        expectGolden("listener-chat-80x24", render(model))
    }

    @Test func invitationPrompt() {
        var model = Scenes.sketch()
        model.status = .init(name: "Eli", role: .audience, handRaised: true, hints: Scenes.handUpHints)
        model.overlay = .invitation(.init(from: "Ana", micLevel: 60))
        expectGolden("invitation-80x24", render(model))
    }

    @Test func invitationWithoutMicrophone() {
        var model = Scenes.sketch()
        model.status = .init(name: "Eli", role: .audience, handRaised: true, hints: Scenes.handUpHints)
        model.overlay = .invitation(
            .init(
                from: "Ana", micName: "default", micLevel: nil,
                micProblem: "No microphone (“default” not found). Choose one with --input NAME.", secondsLeft: 95,
                acceptSelected: false))
        expectGolden("invitation-no-mic-40x12", render(model, width: 40, height: 12))
    }

    @Test func helpOverlay() {
        var model = Scenes.sketch()
        model.overlay = .help(lines: Scenes.helpLines(glyphs: .unicode), scroll: 0)
        expectGolden("help-80x24", render(model))
        expectGolden("help-40x12", render(model, width: 40, height: 12))
    }

    @Test func confirmationDialog() {
        var model = Scenes.sketch()
        model.overlay = .confirmation(
            .init(
                title: "Remove Eli?", message: "Eli leaves the room now and cannot rejoin until the room ends.",
                confirmLabel: "Remove"))
        expectGolden("confirm-remove-80x24", render(model))
    }

    @Test func actionsMenu() {
        var model = Scenes.sketch()
        model.overlay = .actions(
            .init(
                peerName: "Chen",
                items: [
                    KeyHint("M", "Mute"), KeyHint("a", "Move to audience"), KeyHint("x", "Remove from the room"),
                ], selected: 1))
        expectGolden("actions-80x24", render(model))
    }

    @Test func commandLineAndNotice() {
        var model = Scenes.sketch()
        model.notice = .init("Reconnecting to the server (try 2); audio resumes when it is back", isError: true)
        model.header.connection = .reconnecting(attempt: 2)
        model.commandLine = LineEditor(prompt: "/", text: "invite Eli")
        expectGolden("command-line-80x24", render(model))
    }

    @Test func aSmallRoomKeepsThreeChatLinesAndWrapsThem() throws {
        // 50x16, five people on stage, two hands up, four listeners and the chat open: the stage took the spare
        // rows and left the chat pane two. The audience now gives up its row, named on its title line, so that
        // the chat pane keeps three lines, and a long event wraps rather than being cut.
        var model = RoomScreenModel(
            header: Scenes.header(count: 11),
            stage: [.init(name: "Ana", role: .host, muted: true)]
                + ["Sol", "Tia", "Uri", "Val"].map { .init(name: $0, role: .speaker, muted: true) },
            hands: .full([
                .init(position: 1, name: "Eli", waitingSeconds: 4), .init(position: 2, name: "Fay", waitingSeconds: 3),
            ]), audience: ["Bea", "Cy", "Dee", "Gus"],
            status: .init(name: "Ana", role: .host, micMuted: true, hints: Scenes.stageHints(muted: true)))
        model.chatVisible = true
        model.chat = [
            .event("Bea joined."), .event("Cy joined."), .event("Fay raised their hand."),
            .event("Gus joined."), .event("Eli raised their hand; press n to invite the next raised hand"),
        ]
        let lines = render(model, width: 50, height: 16, theme: Theme(level: .none)).lines()
        let screen = lines.joined(separator: "\n")
        let title = try #require(lines.firstIndex { $0.contains("Chat and events") }, "\(screen)")
        let pane = Array(lines[(title + 1)..<(lines.count - 2)])
        #expect(pane.count == 3, "\(screen)")
        #expect(lines.contains { $0.contains("Audience (4): Bea, Cy, Dee, Gus") }, "\(screen)")
        #expect(pane.first?.contains("Gus joined.") == true, "\(screen)")
        let words = pane.joined(separator: " ").split(separator: " ").joined(separator: " ")
        #expect(words.hasSuffix("Gus joined. · Eli raised their hand; press n to invite the next raised hand"))
        #expect(!pane.joined().contains("…"), "\(screen)")
    }

    @Test func smallTerminal() {
        expectGolden("sketch-40x12", render(Scenes.sketch(), width: 40, height: 12))
        var chat = Scenes.sketch()
        chat.chatVisible = true
        chat.chat = [.message(from: "Ana", text: "hello", to: nil)]
        expectGolden("chat-40x12", render(chat, width: 40, height: 12))
    }

    @Test func belowTheMinimum() {
        expectGolden("sketch-24x6", render(Scenes.sketch(), width: 24, height: 6))
    }

    @Test func asciiMode() {
        let theme = Theme(level: .none, ascii: true)
        var model = Scenes.sketch()
        model.stage[0].name = "Zoë"
        expectGolden("ascii-80x24", render(model, theme: theme))
        var help = model
        help.overlay = .help(lines: Scenes.helpLines(glyphs: .ascii), scroll: 0)
        expectGolden("ascii-help-80x24", render(help, theme: theme))
        let buffer = render(Scenes.sketch(), theme: theme)
        for line in buffer.lines() {
            #expect(line.unicodeScalars.allSatisfy { $0.isASCII }, "non-ASCII in: \(line)")
        }
    }

    @Test func noColourKeepsMeaningInAttributes() {
        var model = Scenes.sketch()
        model.notice = .init("No audio device: plug one in or start with --input FILE", isError: true)
        let buffer = render(model, theme: Theme(level: .none))
        expectGolden("no-color-attributes-80x24", attributeMap(buffer))
        #expect(buffer.cells.allSatisfy { $0.style.foreground == .terminalDefault })
    }

    @Test func wideNamesLineUp() {
        var model = Scenes.sketch()
        model.stage = [
            .init(name: "王小明", role: .host, level: 70, speaking: true),
            .init(name: "さくら", role: .moderator, muted: true),
            .init(name: "👩‍💻 Dev", role: .speaker, level: 30),
            .init(name: "Zoë", role: .speaker),
        ]
        model.hands = .full([
            .init(position: 1, name: "김민준", waitingSeconds: 75),
            .init(position: 2, name: "🇯🇵 Aki", waitingSeconds: 12),
        ])
        model.audience = ["李雷", "韩梅梅", "🎧 Sam", "José", "Ольга", "山田太郎さん", "Noa"]
        model.audienceCount = 7
        let buffer = render(model)
        expectGolden("wide-names-80x24", buffer)
        // Bars in both stage columns start at the same column on every row.
        let barColumns = (2...3).map { row in (0..<80).filter { buffer[$0, row].text == "▁" } }
        #expect(barColumns[0] == barColumns[1])
    }
}
