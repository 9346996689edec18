/// Why a live stream could not start or stopped, in words a host reads after "Streaming to NAME stopped: ".
public enum StreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The destination as written cannot be used (a bad URL, a missing folder).
    case badDestination(text: String, problem: String)
    /// Nothing answered at the address (the server is down, or the port is wrong).
    case unreachable(detail: String)
    /// The server answered and said no to our credentials.
    case passwordRefused
    /// The server answered and refused the stream for another reason (a mount in use, a bad stream key).
    case refused(detail: String)
    /// The connection was lost while streaming.
    case dropped(detail: String)
    /// Writing where the stream goes failed (a full disk, a folder gone).
    case cannotWrite(detail: String)
    /// A library call failed in a way none of the above covers; `place` is the call.
    case library(place: String, detail: String)

    /// The reason as the end of a sentence (no capital, no full stop).
    public var reason: String {
        switch self {
        case .badDestination(let text, let problem): return "\(text) cannot be used: \(problem)"
        case .unreachable(let detail): return "the server could not be reached (\(detail))"
        case .passwordRefused: return "the server refused the password"
        case .refused(let detail): return "the server refused the stream (\(detail))"
        case .dropped(let detail): return "the connection was lost (\(detail))"
        case .cannotWrite(let detail): return "it could not be written (\(detail))"
        case .library(let place, let detail): return "\(place) failed (\(detail))"
        }
    }

    public var description: String { reason }

    /// Whether a host learns nothing new from `other` after this: the same kind of refusal, or the server gone
    /// either way (a dropped connection, then no answer while it is down, is one outage).
    public func isSameTrouble(as other: StreamError) -> Bool {
        switch (self, other) {
        case (.unreachable, .unreachable), (.unreachable, .dropped), (.dropped, .unreachable), (.dropped, .dropped):
            return true
        case (.passwordRefused, .passwordRefused), (.refused, .refused), (.cannotWrite, .cannotWrite):
            return true
        case (.badDestination(let a, _), .badDestination(let b, _)): return a == b
        case (.library(let a, _), .library(let b, _)): return a == b
        default: return false
        }
    }
}
