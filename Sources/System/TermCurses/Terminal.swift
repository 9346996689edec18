import CNcursesw
import Glibc
import TermUI

/// A problem starting or driving the terminal.
public enum TerminalError: Error, CustomStringConvertible, Equatable {
    /// Standard input or output is not a terminal.
    case notATerminal
    /// ncurses could not set up the terminal named by `TERM`.
    case cannotStart(term: String)
    /// Another `Terminal` already owns the screen.
    case alreadyActive

    public var description: String {
        switch self {
        case .notATerminal:
            return "terminal: standard input and output must be a terminal; use --plain for a line mode"
        case .cannotStart(let term):
            return "terminal: cannot start the screen for TERM=\(term.isEmpty ? "(unset)" : term); "
                + "set TERM to your terminal's type, or use --plain"
        case .alreadyActive:
            return "terminal: the screen is already in use"
        }
    }
}

/// The size of the screen in cells.
public struct TerminalSize: Hashable, Sendable {
    /// Columns.
    public var width: Int
    /// Rows.
    public var height: Int
}

/// The terminal through ncursesw: draws cell buffers by their differences, reads keys and resizes, and always
/// gives the terminal back as it found it.
///
/// Only one may exist at a time, and it must be used from one thread. The terminal is restored by `restore()`,
/// when the value is released, at process exit, and on SIGINT, SIGTERM, SIGHUP and SIGQUIT (through handlers
/// that only make async-signal-safe calls, then re-raise the signal).
public final class Terminal {
    /// The colour level in use: what was asked for, lowered to what the terminal offers.
    public let colorLevel: ColorLevel
    private var screen: OpaquePointer?
    private var previous: CellBuffer
    private var pairs: [PairKey: Int32] = [:]
    private let colorCount: Int
    private let pairLimit: Int
    private var active = true

    private struct PairKey: Hashable {
        var foreground: Int32
        var background: Int32
    }

    /// Starts the screen: locale, ncursesw in cbreak mode without echo, keypad on, Escape after 25 ms, colours
    /// when `colors` allows them, cursor hidden.
    ///
    /// - Parameters:
    ///   - colors: the most colours to use; the terminal may offer fewer.
    ///   - interruptAsKey: deliver Ctrl-C as `Key.ctrlC` instead of SIGINT, so the program can leave cleanly.
    public init(colors: ColorLevel, interruptAsKey: Bool = false) throws(TerminalError) {
        guard clubroom_is_screen_active() == 0 else { throw .alreadyActive }
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { throw .notATerminal }
        setlocale(LC_ALL, "")
        if clubroom_locale_is_utf8() == 0 {
            // Wide characters need a UTF-8 locale; C.UTF-8 exists on every Debian system.
            setlocale(LC_CTYPE, "C.UTF-8")
        }
        clubroom_save_tty()
        // newterm rather than initscr: initscr exits the process when it fails, newterm reports it.
        guard let screen = clubroom_newterm() else {
            throw .cannotStart(term: getenv("TERM").map { String(cString: $0) } ?? "")
        }
        self.screen = screen
        clubroom_prepare_restore()
        _ = clubroom_install_restore_handlers()
        cbreak()
        if interruptAsKey { raw() }
        noecho()
        nonl()
        keypad(clubroom_stdscr(), true)
        _ = clubroom_set_escdelay(25)
        var level = colors
        if level > .none && has_colors() {
            start_color()
            use_default_colors()
            let count = Int(clubroom_colors())
            if count < 256 { level = min(level, .ansi16) }
            if count < 8 { level = .none }
        } else {
            level = .none
        }
        colorLevel = level
        colorCount = Int(clubroom_colors())
        pairLimit = Int(clubroom_color_pairs())
        curs_set(0)
        previous = CellBuffer(width: 0, height: 0)
    }

    deinit {
        restore()
    }

    /// Whether the person's locale (`LANG`, `LC_ALL`, `LC_CTYPE`) is UTF-8; a terminal set up for another
    /// encoding (`LANG=C`) may not show Unicode symbols, so the screen should draw ASCII there.
    public static func localeIsUTF8() -> Bool {
        setlocale(LC_ALL, "")
        return clubroom_locale_is_utf8() != 0
    }

    /// Gives the terminal back: ends the screen and restores the tty. Safe to call more than once.
    public func restore() {
        guard active else { return }
        active = false
        _ = clubroom_end_screen()
        if let screen {
            delscreen(screen)
            self.screen = nil
        }
    }

    /// Runs `body` with a started terminal and restores it afterwards, whether `body` returns or throws.
    public static func run<T>(
        colors: ColorLevel, interruptAsKey: Bool = false, _ body: (Terminal) throws -> T
    ) throws -> T {
        let terminal = try Terminal(colors: colors, interruptAsKey: interruptAsKey)
        defer { terminal.restore() }
        return try body(terminal)
    }

    /// The screen's size now.
    public var size: TerminalSize {
        TerminalSize(width: Int(clubroom_getmaxx(clubroom_stdscr())), height: Int(clubroom_getmaxy(clubroom_stdscr())))
    }

    /// Draws `buffer`, writing only what changed since the last one drawn. A buffer of another size (after a
    /// resize) clears the screen first.
    public func draw(_ buffer: CellBuffer) {
        guard active else { return }
        if buffer.width != previous.width || buffer.height != previous.height {
            clear()
            previous = CellBuffer(width: buffer.width, height: buffer.height)
        }
        flush(buffer.diff(from: previous))
        previous = buffer
    }

    /// Forgets what is on screen, so the next `draw` repaints everything (after something else wrote to it).
    public func invalidate() {
        previous = CellBuffer(width: 0, height: 0)
    }

    /// Rings the terminal's bell (or flashes it, as the terminal chooses).
    public func bell() {
        guard active else { return }
        _ = clubroom_beep()
    }

    /// Reports the mouse wheel as `Key.wheelUp` and `.wheelDown` (other mouse buttons stay the terminal's, but
    /// selecting text then takes Shift in most terminals, as in htop).
    public func enableMouseWheel() {
        guard active else { return }
        clubroom_enable_wheel()
    }

    /// Stops the program for the shell's job control, giving the terminal back, and takes it again when the
    /// program continues; the next `draw` repaints everything.
    public func suspend() {
        guard active else { return }
        clubroom_suspend()
        invalidate()
    }

    /// Writes `runs` and refreshes the screen.
    public func flush(_ runs: [DiffRun]) {
        guard active else { return }
        for run in runs where !run.text.isEmpty {
            let (attributes, pair) = attributes(for: run.style)
            _ = clubroom_attr_set(attributes, pair)
            var characters = run.text.unicodeScalars.map { wchar_t(bitPattern: $0.value) }
            let count = Int32(characters.count)
            characters.append(0)
            _ = clubroom_mvaddnwstr(Int32(run.y), Int32(run.x), characters, count)
        }
        _ = clubroom_attr_set(clubroom_attr_normal(), 0)
        refresh()
    }

    /// Waits up to `timeout` milliseconds (forever when negative) for a key; nil when none came.
    public func readKey(timeout milliseconds: Int) -> Key? {
        guard active else { return nil }
        clubroom_timeout(Int32(clamping: milliseconds))
        var character: wint_t = 0
        let result = clubroom_get_wch(&character)
        if result == ERR { return nil }
        if result == KEY_CODE_YES {
            let code = Int32(bitPattern: character)
            if code == clubroom_key_mouse() {
                switch clubroom_read_wheel() {
                case 1: return .wheelUp
                case -1: return .wheelDown
                default: return .unknown(Int(code))
                }
            }
            return Self.key(code: code)
        }
        return Self.key(character: character)
    }

    static func key(character: wint_t) -> Key {
        switch character {
        case 9: return .tab
        case 10, 13: return .enter
        case 27: return .escape
        case 8, 127: return .backspace
        case 1...26: return .ctrl(Character(Unicode.Scalar(UInt8(character) + 0x60)))
        default:
            guard let scalar = Unicode.Scalar(character), character >= 0x20 else {
                return .unknown(Int(character))
            }
            return .char(Character(scalar))
        }
    }

    static func key(code: Int32) -> Key {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_PPAGE: return .pageUp
        case KEY_NPAGE: return .pageDown
        case KEY_DC: return .delete
        case KEY_BACKSPACE: return .backspace
        case KEY_ENTER: return .enter
        case KEY_BTAB: return .backTab
        case clubroom_key_resize(): return .resize
        case (clubroom_key_f0() + 1)...(clubroom_key_f0() + 63): return .function(Int(code - clubroom_key_f0()))
        default: return .unknown(Int(code))
        }
    }

    private func attributes(for style: Style) -> (Int32, Int32) {
        var attributes = clubroom_attr_normal()
        if style.bold { attributes |= clubroom_attr_bold() }
        if style.dim { attributes |= clubroom_attr_dim() }
        if style.reverse { attributes |= clubroom_attr_reverse() }
        if style.underline { attributes |= clubroom_attr_underline() }
        guard colorLevel > .none else { return (attributes, 0) }
        let (foreground, brightForeground) = colorNumber(style.foreground)
        let (background, _) = colorNumber(style.background)
        if brightForeground { attributes |= clubroom_attr_bold() }
        return (attributes, pair(foreground: foreground, background: background))
    }

    /// The ncurses colour number (-1 for the terminal's default), and whether it stands for a bright colour on a
    /// terminal with only eight, which bold shows instead.
    private func colorNumber(_ color: Color) -> (Int32, Bool) {
        switch color {
        case .terminalDefault: return (-1, false)
        case .ansi(let n):
            if colorCount >= 16 { return (Int32(n & 15), false) }
            return (Int32(n & 7), n >= 8)
        case .indexed(let n):
            return Int(n) < colorCount ? (Int32(n), false) : (-1, false)
        }
    }

    /// The colour pair for two colours, set up the first time it is needed; pair 0 when they run out.
    private func pair(foreground: Int32, background: Int32) -> Int32 {
        if foreground == -1 && background == -1 { return 0 }
        let key = PairKey(foreground: foreground, background: background)
        if let existing = pairs[key] { return existing }
        let next = Int32(pairs.count + 1)
        guard Int(next) < min(pairLimit, 32_767) else { return 0 }
        guard init_pair(Int16(next), Int16(foreground), Int16(background)) != ERR else { return 0 }
        pairs[key] = next
        return next
    }
}
