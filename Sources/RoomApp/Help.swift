import RoomCore
import TermUI

/// The highest useful scroll position of the help at the current screen size.
func helpMaximumScroll(_ state: AppState) -> Int {
    HelpOverlay.maximumScroll(lineCount: helpLines(glyphs: state.glyphs).count, height: max(0, state.screenHeight - 3))
}

/// A key while the help is open: it scrolls, and closes with the keys that opened it, Escape, q or Enter.
func helpKey(_ state: inout AppState, _ key: Key, scroll: Int) -> [AppEffect] {
    let limit = helpMaximumScroll(state)
    switch key {
    case .char("?"), .escape, .char("q"), .enter, .function(1): state.overlay = nil
    case .ctrl("c"):
        state.overlay = nil
        return requestLeave(&state)
    case .down, .char("j"): state.overlay = .help(scroll: min(limit, scroll + 1))
    case .up, .char("k"): state.overlay = .help(scroll: max(0, scroll - 1))
    case .pageDown, .char(" "): state.overlay = .help(scroll: min(limit, scroll + 10))
    case .pageUp: state.overlay = .help(scroll: max(0, scroll - 10))
    default: break
    }
    return []
}

func isHelp(_ overlay: AppOverlay?) -> Bool {
    if case .help = overlay { return true }
    return false
}
