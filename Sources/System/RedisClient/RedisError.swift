/// Why a Redis call failed. Every case says what a caller can do about it: `isUnavailable` failures are worth
/// retrying later (the server is down, paused or unreachable); the others are answers.
public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection could be made (refused, no route, timed out while connecting, unknown host).
    case unreachable(endpoint: String, reason: String)
    /// Redis refused this program's login (a wrong password or user), or wants one and none was given.
    case refusedLogin(endpoint: String, reason: String)
    /// The server did not answer within the command timeout; the connection was dropped, since a late reply
    /// would otherwise be read as the answer to the next command.
    case timedOut(endpoint: String, milliseconds: Int)
    /// The connection broke mid-command (closed by the server, reset); whether the command ran is unknown.
    case connectionLost(endpoint: String, reason: String)
    /// A reconnect failed a moment ago; the next attempt waits until the backoff has passed.
    case backingOff(endpoint: String, retryInMilliseconds: Int)
    /// A queued call waited longer than its deadline behind calls Redis did not answer; it was never sent.
    case expired(waitedMilliseconds: Int)
    /// Too many calls are queued for one connection; this one was refused at once.
    case overloaded(queued: Int)
    /// The connection's thread was stopped.
    case stopped
    /// Redis answered with an error reply.
    case server(String)
    /// hiredis could not parse what the server sent.
    case protocolViolation(String)
    /// A reply of another shape than the call needs.
    case unexpectedReply(expected: String, got: String)

    /// The server could not be used just now: try again later.
    public var isUnavailable: Bool {
        switch self {
        case .unreachable, .refusedLogin, .timedOut, .connectionLost, .backingOff, .expired, .overloaded, .stopped:
            true
        case .server, .protocolViolation, .unexpectedReply: false
        }
    }

    public var description: String {
        switch self {
        case .unreachable(let endpoint, let reason): "Redis at \(endpoint) is unreachable: \(reason)"
        case .refusedLogin(let endpoint, let reason): "Redis at \(endpoint) refused the login: \(reason)"
        case .timedOut(let endpoint, let milliseconds): "Redis at \(endpoint) did not answer within \(milliseconds) ms"
        case .connectionLost(let endpoint, let reason): "the connection to Redis at \(endpoint) broke: \(reason)"
        case .backingOff(let endpoint, let retry):
            "Redis at \(endpoint) is unreachable; the next attempt is in \(retry) ms"
        case .expired(let waited): "Redis did not answer for \(waited) ms; the call was not sent"
        case .overloaded(let queued): "\(queued) Redis calls are waiting already; this one was refused"
        case .stopped: "the Redis connection was stopped"
        case .server(let message): "Redis refused the command: \(message)"
        case .protocolViolation(let reason): "Redis sent something that is not RESP: \(reason)"
        case .unexpectedReply(let expected, let got): "Redis answered \(got) where \(expected) was expected"
        }
    }
}
