import RoomCore
import TermUI

/// The help's lines as the screen shows them, in the characters it can draw.
func shownHelpLines(_ state: AppState) -> [KeyHint] {
    helpLines(glyphs: state.glyphs).map { KeyHint($0.key, state.glyphs.plain($0.action)) }
}

/// The highest useful scroll position of the help at the current screen size.
func helpMaximumScroll(_ state: AppState) -> Int {
    HelpOverlay.maximumScroll(
        lines: shownHelpLines(state), width: state.screenWidth, height: max(0, state.screenHeight - 3))
}

/// A key while the help is open: it scrolls, and closes with the keys that opened it, Escape, q or Enter.
func helpKey(_ state: inout AppState, _ key: Key, scroll: Int) -> [AppEffect] {
    let limit = helpMaximumScroll(state)
    switch DialogKeys.action(for: key, in: DialogKeys.help) {
    case .close: state.overlay = nil
    case .leave:
        state.overlay = nil
        return requestLeave(&state)
    case .down: state.overlay = .help(scroll: min(limit, scroll + 1))
    case .up: state.overlay = .help(scroll: max(0, scroll - 1))
    case .pageDown: state.overlay = .help(scroll: min(limit, scroll + 10))
    case .pageUp: state.overlay = .help(scroll: max(0, scroll - 10))
    case nil: break
    }
    return []
}

func isHelp(_ overlay: AppOverlay?) -> Bool {
    if case .help = overlay { return true }
    return false
}
