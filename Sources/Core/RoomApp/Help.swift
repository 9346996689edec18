import RoomCore
import TermUI

/// The highest useful scroll position of the help at the current screen size.
func helpMaximumScroll(_ state: AppState) -> Int {
    HelpOverlay.maximumScroll(
        lines: helpLines(glyphs: state.glyphs).map { .init(key: $0.key, text: state.glyphs.plain($0.text)) },
        width: state.screenWidth, height: max(0, state.screenHeight - 3))
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
