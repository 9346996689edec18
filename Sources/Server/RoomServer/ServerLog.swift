import Foundation
import Platform
import Synchronization

/// How much a log line matters.
public enum LogLevel: Int, Sendable, Comparable, CustomStringConvertible {
    case debug, info, warning, error

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .debug: "DEBUG"
        case .info: "INFO"
        case .warning: "WARN"
        case .error: "ERROR"
        }
    }
}

/// A logger writing one line per message, `2026-11-29T12:00:00.123Z INFO message`, to a file descriptor
/// (stderr for the server). Lines from different threads never interleave.
///
/// A message is one line whatever it holds: text from the network (a token's header, a room name, a reason) can
/// reach a message before anyone is authenticated, so every control character (C0, DEL, C1), line and paragraph
/// separator and bidirectional control is written escaped (`\n`, `\u{1B}`), here in the one place every line
/// passes. A forged line or a terminal escape in the log is then impossible.
public final class ServerLog: Sendable {
    /// The least important level written.
    public let minimum: LogLevel
    private let descriptor: Int32
    private let lock = Mutex(())

    /// A logger writing to `descriptor` (2 is stderr).
    public init(minimum: LogLevel = .info, descriptor: Int32 = 2) {
        self.minimum = minimum
        self.descriptor = descriptor
    }

    /// Writes `message` at `level` when the level is at least `minimum`.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level >= minimum else { return }
        let line = Array("\(Self.timestamp()) \(level) \(Self.escaped(message()))\n".utf8)
        lock.withLock { _ in
            var offset = 0
            while offset < line.count {
                let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }

    /// `text` with every character that could break a line or drive a terminal written as an escape: `\n`, `\r`,
    /// `\t`, and `\u{XX}` for the other C0 controls, DEL, the C1 controls, U+2028/U+2029 and the bidirectional
    /// controls (U+061C, U+200E/F, U+202A–E, U+2066–9).
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u{\(hex.count < 2 ? "0" + hex : hex)}"
            }
        }
        return out
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// The current UTC time in ISO 8601 with milliseconds.
    static func timestamp() -> String {
        let now = WallClock.milliseconds()
        var seconds = time_t(now / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = Int(now % 1000)
        let millisText = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
            + "\(two(parts.tm_min)):\(two(parts.tm_sec)).\(millisText)Z"
    }
}

/// The wall clock in milliseconds since the Unix epoch.
package func currentTimestamp() -> Int64 {
    WallClock.milliseconds()
}
