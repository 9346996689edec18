/// The room screen, drawn as a pure function of a `RoomScreenModel`.
///
/// From the top: the header, then the stage, raised hands, audience and (when shown) chat sections, each with a
/// title line; then a rule (or the notice, when there is one) and the status line (or the command line, when
/// open). Overlays are drawn last, centred. See docs/ui.md for how the sections share the rows.
public enum RoomScreen {
    /// The rows each section gets, title line included; zero for a section that is not shown.
    public struct SectionHeights: Hashable, Sendable {
        /// The stage.
        public var stage: Int
        /// The raised hands.
        public var hands: Int
        /// The audience.
        public var audience: Int
        /// The chat and event pane.
        public var chat: Int
    }

    /// The rows, title included, a shown chat pane keeps ahead of the audience and the raised hands.
    public static let minimumChat = 4

    /// Shares `rows` between the sections.
    ///
    /// Every section first gets its title and one row. When that does not fit, sections lose their content row
    /// and then their title, least important first (chat, audience, raised hands, stage). Rows left over go to the
    /// stage and the raised hands up to what they need (each capped at half and a third of the rows), then to
    /// chat and audience, then to whichever section can use them, and the rest to the chat pane when it shows.
    /// A shown chat pane with lines to show then takes rows from the audience (down to its title line) and then
    /// the raised hands (down to one row) until it has `minimumChat` rows.
    public static func sectionHeights(
        rows: Int, stageNeeds: Int, handsNeed: Int, audienceNeeds: Int, chatNeeds: Int?
    ) -> SectionHeights {
        let total = max(0, rows)
        // Index 0 stage, 1 hands, 2 audience, 3 chat; lower index is more important.
        var needs = [max(1, stageNeeds), max(1, handsNeed), max(1, audienceNeeds), max(1, chatNeeds ?? 0)]
        var heights = [2, 2, 2, chatNeeds == nil ? 0 : 2]
        if chatNeeds == nil { needs[3] = 0 }
        var order = [3, 2, 1, 0].filter { heights[$0] > 0 }
        while heights.reduce(0, +) > total {
            if let index = order.first(where: { heights[$0] == 2 }) {
                heights[index] = 1
            } else if let index = order.first {
                heights[index] = 0
                order.removeFirst()
            } else {
                break
            }
        }
        var spare = total - heights.reduce(0, +)
        func grow(_ index: Int, upTo limit: Int) {
            guard heights[index] == 2, spare > 0 else { return }
            let extra = min(spare, max(0, min(needs[index] + 1, limit) - heights[index]))
            heights[index] += extra
            spare -= extra
        }
        grow(0, upTo: max(2, total / 2))
        grow(1, upTo: max(2, total / 3))
        if heights[3] == 2 {
            let chatShare = spare / 2
            let before = spare
            spare = chatShare
            grow(3, upTo: Int.max)
            spare = before - chatShare + spare
        }
        grow(2, upTo: Int.max)
        grow(3, upTo: Int.max)
        grow(0, upTo: Int.max)
        grow(1, upTo: Int.max)
        // What nobody needs is the chat pane's: it is the screen's free space.
        if heights[3] >= 2 { heights[3] += spare }
        // A shown chat pane keeps three lines when it has them: the audience gives up rows down to its title line,
        // which then names them on one line, then the raised hands down to one row (the queue's head and any
        // pending invitation stay in sight).
        if heights[3] >= 2 {
            for (index, floor) in [(2, 1), (1, 2)] {
                let short = min(minimumChat, needs[3] + 1) - heights[3]
                guard short > 0 else { break }
                let given = min(short, max(0, heights[index] - floor))
                heights[index] -= given
                heights[3] += given
            }
        }
        return SectionHeights(stage: heights[0], hands: heights[1], audience: heights[2], chat: heights[3])
    }

    /// How many rows the notice takes: two when it does not fit on one and the screen has rows to spare (at least
    /// 10), else one.
    static func noticeRows(_ model: RoomScreenModel, width: Int, height: Int, theme: Theme) -> Int {
        guard let notice = model.notice, height >= 10 else { return 1 }
        return min(2, NoticeLine(notice).rowsNeeded(width: width, theme: theme))
    }

    /// The rows each section gets on a screen of this size, as `render` shares them.
    public static func layout(_ model: RoomScreenModel, width: Int, height: Int, glyphs: Glyphs) -> SectionHeights {
        let theme = Theme(level: .none, ascii: glyphs == .ascii)
        let rows = max(0, height - 2 - noticeRows(model, width: width, height: height, theme: theme))
        return sections(model, width: width, rows: rows, theme: theme).heights
    }

    /// How many rows of chat (its title not counted) the pane shows on a screen of this size; 0 when hidden.
    public static func chatRows(_ model: RoomScreenModel, width: Int, height: Int, glyphs: Glyphs) -> Int {
        max(0, layout(model, width: width, height: height, glyphs: glyphs).chat - 1)
    }

    /// Draws the whole screen for `model` into `buffer`, replacing what was there.
    public static func render(_ model: RoomScreenModel, into buffer: inout CellBuffer, theme: Theme) {
        let area = buffer.area
        buffer.fill(area)
        guard !area.isEmpty else { return }
        let bottom = area.row(area.height - 1)
        if area.height == 1 {
            renderStatus(model, into: &buffer, row: bottom, theme: theme)
            return
        }
        HeaderBar(model.header).render(into: &buffer, area: area.row(0), theme: theme)
        renderStatus(model, into: &buffer, row: bottom, theme: theme)
        var noticeHeight = 0
        if area.height >= 3 {
            noticeHeight = noticeRows(model, width: area.width, height: area.height, theme: theme)
            let noticeArea = Rect(x: area.x, y: area.bottom - 1 - noticeHeight, width: area.width, height: noticeHeight)
            if let notice = model.notice {
                NoticeLine(notice).render(into: &buffer, area: noticeArea, theme: theme)
            } else {
                Rule().render(into: &buffer, area: noticeArea, theme: theme)
            }
        }
        let middle = Rect(x: area.x, y: area.y + 1, width: area.width, height: max(0, area.height - 2 - noticeHeight))
        if !middle.isEmpty {
            renderSections(model, into: &buffer, area: middle, theme: theme)
        }
        if let overlay = model.overlay {
            let overlayArea = area.height > 3 ? Rect(x: 0, y: 1, width: area.width, height: area.height - 3) : area
            switch overlay {
            case .help(let lines, let scroll):
                HelpOverlay(lines: lines, scroll: scroll).render(into: &buffer, area: overlayArea, theme: theme)
            case .invitation(let invitation):
                InvitationPrompt(invitation).render(into: &buffer, area: overlayArea, theme: theme)
            case .confirmation(let confirmation):
                ConfirmationDialog(confirmation).render(into: &buffer, area: overlayArea, theme: theme)
            case .actions(let menu): ActionMenuOverlay(menu).render(into: &buffer, area: overlayArea, theme: theme)
            case .stats(let table): StatsOverlay(table).render(into: &buffer, area: overlayArea, theme: theme)
            }
        }
    }

    private static func renderStatus(_ model: RoomScreenModel, into buffer: inout CellBuffer, row: Rect, theme: Theme) {
        if let editor = model.commandLine {
            editor.render(into: &buffer, area: row)
        } else {
            StatusBar(model.status).render(into: &buffer, area: row, theme: theme)
        }
    }

    /// The section widgets for `model` and the rows each gets.
    private static func sections(
        _ model: RoomScreenModel, width: Int, rows: Int, theme: Theme
    ) -> (stage: StageGrid, hands: HandQueueView, audience: AudienceGrid, chat: ChatPane, heights: SectionHeights) {
        var stageSelected: Int?
        var handSelected: Int?
        var audienceSelected: Int?
        switch model.selection {
        case .none: break
        case .stage(let index): stageSelected = index
        case .hand(let index): handSelected = index
        case .audience(let index): audienceSelected = index
        }
        let stage = StageGrid(entries: model.stage, selected: stageSelected)
        let hands = HandQueueView(queue: model.hands, invitations: model.invitations, selected: handSelected)
        let audience = AudienceGrid(
            names: model.audience, offset: model.audienceOffset, total: model.audienceCount,
            selected: audienceSelected)
        let chat = ChatPane(lines: model.chat, scroll: model.chatScroll, below: model.linesBelow)
        // The pane wants the rows its lines take wrapped (scrolled up, as many as it has).
        let chatNeeds = model.chatScroll > 0 ? rows : chat.rowsNeeded(width: width, theme: theme, limit: max(1, rows))
        let heights = sectionHeights(
            rows: rows, stageNeeds: stage.rowsNeeded(width: width, glyphs: theme.glyphs),
            handsNeed: hands.rowsNeeded(width: width), audienceNeeds: audience.rowsNeeded(width: width),
            chatNeeds: model.chatVisible ? max(1, chatNeeds) : nil)
        return (stage, hands, audience, chat, heights)
    }

    private static func renderSections(
        _ model: RoomScreenModel, into buffer: inout CellBuffer, area: Rect, theme: Theme
    ) {
        let (stage, hands, audience, chat, heights) = sections(
            model, width: area.width, rows: area.height, theme: theme)
        var y = area.y
        func section(_ title: String, height: Int, draw: (inout CellBuffer, Rect) -> Void) {
            guard height > 0 else { return }
            SectionHeader(title).render(
                into: &buffer, area: Rect(x: area.x, y: y, width: area.width, height: 1), theme: theme)
            if height > 1 {
                draw(&buffer, Rect(x: area.x, y: y + 1, width: area.width, height: height - 1))
            }
            y += height
        }
        let handCount = model.hands.count
        // A section cut to its title line names who is in it there.
        var handsTitle = handCount > 0 ? "Raised hands (\(formatCount(handCount)))" : "Raised hands"
        if heights.hands == 1, case .full(let entries) = model.hands, !entries.isEmpty {
            handsTitle += ": " + entries.map(\.name).joined(separator: ", ")
        }
        var audienceTitle = "Audience (\(formatCount(model.audienceCount)))"
        if heights.audience == 1, !model.audience.isEmpty {
            let more = model.audienceOffset > 0 || model.audience.count < model.audienceCount
            audienceTitle += ": " + model.audience.joined(separator: ", ") + (more ? ", " + theme.glyphs.ellipsis : "")
        }
        section("Stage", height: heights.stage) { stage.render(into: &$0, area: $1, theme: theme) }
        section(handsTitle, height: heights.hands) {
            hands.render(into: &$0, area: $1, theme: theme)
        }
        section(audienceTitle, height: heights.audience) {
            audience.render(into: &$0, area: $1, theme: theme)
        }
        section("Chat and events", height: heights.chat) { chat.render(into: &$0, area: $1, theme: theme) }
    }
}
