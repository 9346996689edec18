/// One key press (or a resize), as the terminal adapter reads it.
public enum Key: Hashable, Sendable {
    /// A printable character, including space.
    case char(Character)
    /// Control plus a letter, e.g. `.ctrl("c")` for Ctrl-C (Enter, Tab, Escape and Backspace have their own cases).
    case ctrl(Character)
    /// Enter or Return.
    case enter
    /// Escape.
    case escape
    /// Tab.
    case tab
    /// Shift-Tab.
    case backTab
    /// Backspace.
    case backspace
    /// Delete (forwards).
    case delete
    /// Arrow up.
    case up
    /// Arrow down.
    case down
    /// Arrow left.
    case left
    /// Arrow right.
    case right
    /// Home.
    case home
    /// End.
    case end
    /// Page up.
    case pageUp
    /// Page down.
    case pageDown
    /// A function key, F1 is `.function(1)`.
    case function(Int)
    /// The mouse wheel turned up (away from the person), where the terminal reports it.
    case wheelUp
    /// The mouse wheel turned down.
    case wheelDown
    /// The terminal changed size.
    case resize
    /// A key the adapter could not name.
    case unknown(Int)

    /// Ctrl-C.
    public static let ctrlC = Key.ctrl("c")
}
