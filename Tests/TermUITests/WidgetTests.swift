import Testing

@testable import TermUI

@Suite("Widgets")
struct WidgetTests {
    static let theme = Theme(level: .ansi16)

    typealias Draw = @Sendable (inout CellBuffer, Rect, Theme) -> Void

    static let widgets: [(String, Draw)] = [
        ("section", { SectionHeader("Stage").render(into: &$0, area: $1, theme: $2) }),
        ("rule", { Rule().render(into: &$0, area: $1, theme: $2) }),
        ("level", { LevelBar(level: 70).render(into: &$0, area: $1, theme: $2) }),
        ("stage", { StageGrid(entries: Scenes.sketchStage, selected: 1).render(into: &$0, area: $1, theme: $2) }),
        ("emptyStage", { StageGrid(entries: [], selected: nil).render(into: &$0, area: $1, theme: $2) }),
        (
            "hands",
            {
                HandQueueView(queue: .full([.init(position: 1, name: "Eli", waitingSeconds: 3)]), selected: 0)
                    .render(into: &$0, area: $1, theme: $2)
            }
        ),
        (
            "ownHand",
            {
                HandQueueView(queue: .ownPlace(position: 1, total: 1), selected: nil).render(
                    into: &$0, area: $1, theme: $2)
            }
        ),
        (
            "audience",
            {
                AudienceGrid(names: Scenes.sketchAudience, total: 1197, selected: 3).render(
                    into: &$0, area: $1, theme: $2)
            }
        ),
        (
            "chat",
            {
                ChatPane(lines: [.event("Eli joined"), .message(from: "Ana", text: "hi", to: "you")]).render(
                    into: &$0, area: $1, theme: $2)
            }
        ),
        ("header", { HeaderBar(Scenes.header()).render(into: &$0, area: $1, theme: $2) }),
        (
            "status",
            {
                StatusBar(.init(name: "Bo", role: .moderator, micMuted: false, hints: Scenes.stageHints(muted: false)))
                    .render(into: &$0, area: $1, theme: $2)
            }
        ),
        ("notice", { NoticeLine(.init("No audio device", isError: true)).render(into: &$0, area: $1, theme: $2) }),
        (
            "help",
            { HelpOverlay(lines: Scenes.helpLines(glyphs: .unicode), scroll: 3).render(into: &$0, area: $1, theme: $2) }
        ),
        ("invitation", { InvitationPrompt(.init(from: "Ana", micLevel: 40)).render(into: &$0, area: $1, theme: $2) }),
        (
            "confirm",
            {
                ConfirmationDialog(.init(title: "End the room?", message: "Everyone leaves.", confirmLabel: "End"))
                    .render(into: &$0, area: $1, theme: $2)
            }
        ),
        (
            "actions",
            {
                ActionMenuOverlay(.init(peerName: "Chen", items: [KeyHint("M", "Mute")])).render(
                    into: &$0, area: $1, theme: $2)
            }
        ),
        ("box", { Box(title: "Title", footer: "Esc").render(into: &$0, area: $1, theme: $2) }),
        ("room", { buffer, _, theme in RoomScreen.render(Scenes.sketch(), into: &buffer, theme: theme) }),
    ]

    @Test(arguments: [(0, 0), (1, 1), (2, 1), (1, 3), (3, 2)])
    func everyWidgetSurvivesTinyAreas(width: Int, height: Int) {
        for (name, draw) in Self.widgets {
            var buffer = CellBuffer(width: width, height: height)
            draw(&buffer, buffer.area, Self.theme)
            #expect(buffer.lines().count == height, "\(name)")
            #expect(buffer.lines().allSatisfy { DisplayWidth.of($0) == width }, "\(name) at \(width)x\(height)")
        }
    }

    @Test func widgetsStayInsideTheirArea() {
        for (name, draw) in Self.widgets where name != "room" {
            var buffer = CellBuffer(width: 30, height: 10)
            buffer.fill(buffer.area, with: "#")
            let area = Rect(x: 5, y: 2, width: 20, height: 6)
            draw(&buffer, area, Self.theme)
            for y in 0..<10 {
                for x in 0..<30 where !(x >= 5 && x < 25 && y >= 2 && y < 8) {
                    #expect(buffer[x, y].text == "#", "\(name) wrote outside its area at \(x),\(y)")
                }
            }
        }
    }

    @Test func everyRoomSizeRendersWithoutOverlap() {
        for width in [0, 1, 5, 20, 40, 80, 133] {
            for height in [0, 1, 2, 3, 4, 6, 12, 24, 50] {
                var buffer = CellBuffer(width: width, height: height)
                var model = Scenes.sketch()
                model.chatVisible = height % 2 == 0
                model.chat = [.event("Eli joined")]
                RoomScreen.render(model, into: &buffer, theme: Self.theme)
                #expect(buffer.lines().allSatisfy { DisplayWidth.of($0) == width })
            }
        }
    }

    @Test func theSelectionIsAlwaysVisible() {
        let names = Scenes.names(200)
        let stage = (0..<30).map { RoomScreenModel.StageEntry(name: "S\($0)", role: .speaker) }
        let hands = (0..<50).map { RoomScreenModel.HandEntry(position: $0 + 1, name: "H\($0)", waitingSeconds: 0) }
        for (width, height) in [(40, 3), (80, 2), (25, 1)] {
            let area = Rect(width: width, height: height)
            for index in stride(from: 0, to: 200, by: 7) {
                var buffer = CellBuffer(width: width, height: height)
                AudienceGrid(names: names, total: 200, selected: index).render(
                    into: &buffer, area: area, theme: Self.theme)
                #expect(buffer.lines().contains { $0.contains("›" + names[index] + " ") }, "\(index) at \(width)")
            }
            for index in stride(from: 0, to: 30, by: 3) {
                var buffer = CellBuffer(width: width, height: height)
                StageGrid(entries: stage, selected: index).render(into: &buffer, area: area, theme: Self.theme)
                #expect(buffer.lines().contains { $0.contains("›  S\(index) ") }, "stage \(index) at \(width)")
            }
            for index in stride(from: 0, to: 50, by: 5) {
                var buffer = CellBuffer(width: width, height: height)
                HandQueueView(queue: .full(hands), selected: index).render(
                    into: &buffer, area: area, theme: Self.theme)
                #expect(
                    buffer.lines().contains { $0.contains("›") && $0.contains("\(index + 1). H\(index) ") },
                    "hand \(index)")
            }
        }
    }

    @Test func levelBarRisesWithTheLevel() {
        let theme = Theme(level: .none)
        func bar(_ level: Int, ascii: Bool = false) -> String {
            var buffer = CellBuffer(width: 5, height: 1)
            LevelBar(level: level).render(into: &buffer, area: buffer.area, theme: Theme(level: .none, ascii: ascii))
            return buffer.lines()[0]
        }
        #expect(bar(0) == "▁    ")
        #expect(bar(50) == "▁▃▅  ")
        #expect(bar(100) == "▁▃▅▆█")
        #expect(bar(250) == "▁▃▅▆█")
        #expect(bar(-4) == "▁    ")
        #expect(bar(0, ascii: true) == "_    ")
        for (level, expected) in [(-500, "▁"), (0, "▁"), (50, "▄"), (100, "█"), (900, "█")] {
            var one = CellBuffer(width: 1, height: 1)
            LevelBar(level: level).render(into: &one, area: one.area, theme: theme)
            #expect(one.lines() == [expected], "level \(level)")
        }
        #expect(bar(100, ascii: true) == "#####")
        #expect(theme.style(.level) == Style())
    }

    @Test func sectionsShareRowsByImportance() {
        let roomy = RoomScreen.sectionHeights(rows: 20, stageNeeds: 2, handsNeed: 1, audienceNeeds: 40, chatNeeds: nil)
        #expect(roomy == .init(stage: 3, hands: 2, audience: 15, chat: 0))
        let tight = RoomScreen.sectionHeights(rows: 5, stageNeeds: 2, handsNeed: 1, audienceNeeds: 40, chatNeeds: 3)
        #expect(tight == .init(stage: 2, hands: 1, audience: 1, chat: 1))
        let withChat = RoomScreen.sectionHeights(
            rows: 20, stageNeeds: 2, handsNeed: 1, audienceNeeds: 40, chatNeeds: 30)
        #expect(withChat == .init(stage: 3, hands: 2, audience: 8, chat: 7))
        #expect(
            RoomScreen.sectionHeights(rows: 0, stageNeeds: 1, handsNeed: 1, audienceNeeds: 1, chatNeeds: nil)
                == .init(stage: 0, hands: 0, audience: 0, chat: 0))
    }

    @Test func theStatusLineKeepsTheMostImportantHintsAndShowsHelpLast() {
        let status = RoomScreenModel.StatusLine(
            name: "Ana", role: .host, micMuted: true, hints: Scenes.stageHints(muted: true))
        // 80 columns: "/ chat" and "q leave" are the least important and do not fit beside the identity.
        var wide = CellBuffer(width: 80, height: 1)
        StatusBar(status).render(into: &wide, area: wide.area, theme: Theme(level: .none))
        #expect(wide.lines() == [" mic muted · you: Ana · host    m unmute  n invite next  Enter actions  ? help  "])
        // 40 columns: the identity keeps 16 and is cut from the end: the microphone's state comes first and stays.
        var narrow = CellBuffer(width: 40, height: 1)
        StatusBar(status).render(into: &narrow, area: narrow.area, theme: Theme(level: .none))
        #expect(narrow.lines() == [" mic muted · you: A…  m unmute  ? help  "])
    }

    /// The chat pane shows whole lines only: a line that would lose its end at the top of the pane is left out,
    /// and the rows above the lines that fit stay blank.
    @Test func theChatPaneShowsWholeLinesOnly() {
        let long = RoomScreenModel.ChatLine.event("Eli joined the room and said hello to everyone here")
        let pane = ChatPane(lines: [long, .message(from: "Ana", text: "hi", to: nil)])
        var buffer = CellBuffer(width: 20, height: 3)
        pane.render(into: &buffer, area: buffer.area, theme: Theme(level: .none))
        #expect(buffer.lines().map { $0.trimmingTrailingSpaces } == ["", "", " Ana: hi"])
        // With room for it, the long line shows whole, on its four rows.
        var tall = CellBuffer(width: 20, height: 5)
        pane.render(into: &tall, area: tall.area, theme: Theme(level: .none))
        #expect(
            tall.lines().map { $0.trimmingTrailingSpaces } == [
                " · Eli joined the", "  room and said", "  hello to everyone", "  here", " Ana: hi",
            ])
    }

    /// Only a newest line taller than the whole pane shows in part: from its start, cut with `…`.
    @Test func aLineTallerThanThePaneShowsFromItsStart() {
        let pane = ChatPane(lines: [.event("Eli joined the room and said hello to everyone here")])
        var buffer = CellBuffer(width: 20, height: 2)
        pane.render(into: &buffer, area: buffer.area, theme: Theme(level: .none))
        #expect(buffer.lines().map { $0.trimmingTrailingSpaces } == [" · Eli joined the", "  room and said he…"])
    }

    /// A notice wider than the row wraps at spaces, its later rows indented under the text and no wider than the
    /// row; one longer than its rows ends with its last whole word that fits and `…` (the log keeps it whole).
    @Test func aLongNoticeWrapsAndShortensAtWordBoundaries() {
        let notice = NoticeLine(
            .init("Sound could not start: the output device is busy. You can still see the room.", isError: true))
        let theme = Theme(level: .none)
        #expect(notice.rowsNeeded(width: 40, theme: theme) == 3)
        var whole = CellBuffer(width: 40, height: 3)
        notice.render(into: &whole, area: whole.area, theme: theme)
        #expect(
            whole.lines().map { $0.trimmingTrailingSpaces } == [
                " ! Sound could not start: the output", "   device is busy. You can still see", "   the room.",
            ])
        var two = CellBuffer(width: 40, height: 2)
        notice.render(into: &two, area: two.area, theme: theme)
        #expect(
            two.lines().map { $0.trimmingTrailingSpaces } == [
                " ! Sound could not start: the output", "   device is busy. You can still see …",
            ])
        var one = CellBuffer(width: 40, height: 1)
        notice.render(into: &one, area: one.area, theme: theme)
        #expect(one.lines().map { $0.trimmingTrailingSpaces } == [" ! Sound could not start: the output …"])
    }

    /// On a narrow header the topic is kept before the connection's details, which shrink to the mark.
    @Test func theHeaderKeepsTheTopicBeforeTheConnectionsDetails() {
        let header = RoomScreenModel.Header(
            room: "lobby", topic: "Friday terminal hour", peopleCount: 1204,
            connection: .connected(roundTripMilliseconds: 18))
        var narrow = CellBuffer(width: 40, height: 1)
        HeaderBar(header).render(into: &narrow, area: narrow.area, theme: Theme(level: .none))
        #expect(narrow.lines() == [#" lobby — "Friday terminal hour"       ● "#])
        var middle = CellBuffer(width: 50, height: 1)
        HeaderBar(header).render(into: &middle, area: middle.area, theme: Theme(level: .none))
        #expect(middle.lines() == [#" lobby — "Friday terminal hour"      ● 1,204 here "#])
        var wide = CellBuffer(width: 80, height: 1)
        HeaderBar(header).render(into: &wide, area: wide.area, theme: Theme(level: .none))
        #expect(wide.lines() == [#" Clubroom · lobby — "Friday terminal hour"       ● connected 18 ms · 1,204 here "#])
    }

    /// While the room is recorded the header starts with a red `● REC` (`[REC]` in ASCII) at every width, before
    /// the room's name; without it the header is as it was.
    @Test func theRecordingMarkLeadsTheHeaderAtEveryWidth() {
        var header = Scenes.header()
        header.recording = true
        var wide = CellBuffer(width: 80, height: 1)
        HeaderBar(header).render(into: &wide, area: wide.area, theme: Theme(level: .ansi16))
        #expect(wide.lines() == [#" ● REC Clubroom · lobby — "Friday terminal hour" ● connected 18 ms · 1,204 here "#])
        for x in 1...5 {
            #expect(wide[x, 0].style.foreground == .ansi(9) && wide[x, 0].style.bold, "column \(x)")
        }
        #expect(wide[7, 0].style.foreground == .terminalDefault)
        var ascii = CellBuffer(width: 40, height: 1)
        HeaderBar(header).render(into: &ascii, area: ascii.area, theme: Theme(level: .none, ascii: true))
        #expect(ascii.lines() == [#" [REC] lobby - "Friday terminal hour" o "#])
        var tiny = CellBuffer(width: 8, height: 1)
        HeaderBar(header).render(into: &tiny, area: tiny.area, theme: Theme(level: .none))
        #expect(tiny.lines() == [" ● REC  "])
        var small = CellBuffer(width: 9, height: 1)
        HeaderBar(header).render(into: &small, area: small.area, theme: Theme(level: .none))
        #expect(small.lines() == [" ● REC ● "])
        header.recording = false
        var plain = CellBuffer(width: 80, height: 1)
        HeaderBar(header).render(into: &plain, area: plain.area, theme: Theme(level: .none))
        #expect(plain.lines() == [#" Clubroom · lobby — "Friday terminal hour"       ● connected 18 ms · 1,204 here "#])
    }

    /// An invitation to speak in a recorded room says so, in the recording's style.
    @Test func anInvitationInARecordedRoomSaysSo() {
        var buffer = CellBuffer(width: 60, height: 16)
        let invitation = RoomScreenModel.Invitation(from: "Ana", micLevel: 40, recorded: true)
        InvitationPrompt(invitation).render(into: &buffer, area: buffer.area, theme: Theme(level: .none))
        let text = buffer.lines().joined(separator: "\n")
        #expect(text.contains("│ ● REC This room is being recorded: what you say  │"), "\(text)")
        #expect(text.contains("│ on stage is kept.                                │"), "\(text)")
        var unrecorded = CellBuffer(width: 60, height: 16)
        InvitationPrompt(RoomScreenModel.Invitation(from: "Ana", micLevel: 40)).render(
            into: &unrecorded, area: unrecorded.area, theme: Theme(level: .none))
        #expect(!unrecorded.lines().joined().contains("recorded"))
    }

    /// Invitations that do not fit with their senders and times keep every name, with the count and the oldest.
    @Test func invitationsThatDoNotFitKeepTheirNames() {
        let invitations: [RoomScreenModel.InvitationEntry] = [
            .init(name: "Eli", by: "you", seconds: 12), .init(name: "Hana", by: "Ana", seconds: 63),
        ]
        let view = HandQueueView(queue: .full([]), invitations: invitations, selected: nil)
        var narrow = CellBuffer(width: 40, height: 1)
        view.render(into: &narrow, area: narrow.area, theme: Theme(level: .none))
        #expect(narrow.lines()[0] == "  Invited (2, oldest 1m03s): Eli, Hana  ")
        var wide = CellBuffer(width: 80, height: 1)
        view.render(into: &wide, area: wide.area, theme: Theme(level: .none))
        #expect(wide.lines()[0].hasPrefix("  Invited: Eli (by you, 0m12s) · Hana (by Ana, 1m03s)"))
    }

    /// The queue uses the width its columns have: at 100 columns a long name shows whole.
    @Test func theQueueUsesTheWidthItHas() {
        let entries: [RoomScreenModel.HandEntry] = [
            .init(position: 1, name: "Bea Listener", waitingSeconds: 30),
            .init(position: 2, name: "Cy", waitingSeconds: 5, invited: true),
        ]
        var buffer = CellBuffer(width: 100, height: 2)
        HandQueueView(
            queue: .full(entries), invitations: [.init(name: "Cy", by: "you", seconds: 12)], selected: nil
        ).render(into: &buffer, area: buffer.area, theme: Theme(level: .none))
        #expect(buffer.lines()[0].hasPrefix("  Invited: Cy (by you, 0m12s)"))
        #expect(buffer.lines()[1].contains("1. Bea Listener"))
        #expect(buffer.lines()[1].contains("2. Cy"))
        #expect(buffer.lines()[1].contains("invited"))
        #expect(!buffer.lines().joined().contains("Bea Liste…"))
    }

    @Test func colourLevelsFollowTheEnvironment() {
        #expect(ColorLevel.detect(environment: ["NO_COLOR": "1", "TERM": "xterm-256color"]) == .none)
        #expect(ColorLevel.detect(environment: ["NO_COLOR": "", "TERM": "xterm-256color"]) == .ansi256)
        #expect(ColorLevel.detect(environment: ["TERM": "screen"]) == .ansi16)
        #expect(ColorLevel.detect(environment: ["TERM": "xterm", "COLORTERM": "truecolor"]) == .ansi256)
        #expect(ColorLevel.detect(environment: ["TERM": "dumb"]) == .none)
    }

    @Test func themesUseOnlyTheColoursOfTheirLevel() {
        for level in ColorLevel.allCases {
            let theme = Theme(level: level)
            for role in SemanticRole.allCases {
                let style = theme.style(role)
                for color in [style.foreground, style.background] {
                    switch (level, color) {
                    case (_, .terminalDefault), (.ansi16, .ansi), (.ansi256, .indexed): break
                    default: Issue.record("\(role) at \(level) uses \(color)")
                    }
                }
            }
        }
        // Without colour the things that must stand out still do.
        let plain = Theme(level: .none)
        #expect(plain.style(.selection).reverse)
        #expect(plain.style(.activeSpeaker).bold)
        #expect(plain.style(.error).bold)
    }

    @Test func selectedStageEntryIsMarkedAndHighlighted() {
        let buffer = render(Scenes.sketch())
        // Bo, the second stage entry, is selected: the marker precedes the badge and the name is reversed.
        let row = 2
        let marker = (0..<80).first { buffer[$0, row].text == "›" }
        #expect(marker != nil)
        if let marker {
            #expect(buffer[marker + 1, row].text == "◆")
            #expect(buffer[marker + 3, row].text == "B" && buffer[marker + 3, row].style.reverse)
        }
        // Ana is speaking: her name uses the active speaker style.
        let ana = (0..<80).first { buffer[$0, row].text == "A" }!
        #expect(buffer[ana, row].style == Theme(level: .ansi256).style(.activeSpeaker))
    }
}

extension String {
    /// The text without the spaces at its end (a buffer's rows are padded to its width).
    var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
