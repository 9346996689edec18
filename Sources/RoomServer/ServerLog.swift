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
        let line = Array("\(Self.timestamp()) \(level) \(message())\n".utf8)
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
func currentTimestamp() -> Int64 {
    WallClock.milliseconds()
}
