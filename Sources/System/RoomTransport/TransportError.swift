import Glibc

/// A failure in the socket runtime: the operation that failed (`bind 127.0.0.1:7480`, `TLS certificate
/// server.pem`), what went wrong (the `strerror` text, OpenSSL's error string) and, for a connection that could
/// not be made, why as a case a client can act on (`cause`), so nobody has to read it back out of the words.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why a connection could not be made, as far as the transport knows.
    public enum Cause: Sendable, Equatable {
        /// Nothing listens at the address (`ECONNREFUSED`).
        case refused
        /// The host's name could not be resolved.
        case unresolved
        /// The TCP connect got no answer within the connect timeout.
        case connectTimedOut
        /// The connection was made but the TLS or WebSocket handshake did not finish in time (or the system said
        /// `ETIMEDOUT`).
        case timedOut
        /// `wss://` to a server that answered in something other than TLS (a plain server).
        case notTLS
        /// The server's TLS certificate could not be verified.
        case untrustedCertificate
        /// The server answered the WebSocket upgrade with this HTTP status instead of 101 (0: a malformed answer).
        case httpStatus(Int)
        /// Anything else: the words say it.
        case other
    }

    /// What was being done or touched: an operation, an address, a file.
    public var place: String
    /// What went wrong there, in words.
    public var problem: String
    /// Why, as a case.
    public var cause: Cause = .other

    public var description: String { "\(place): \(problem)" }

    /// An error from the current `errno`; a refused or timed-out connect says so in its cause.
    static func system(_ place: String, _ code: Int32 = errno) -> TransportError {
        TransportError(place: place, problem: String(cString: strerror(code)), cause: Cause(errno: code))
    }
}

extension TransportError.Cause {
    /// The cause an `errno` from a connect names.
    init(errno code: Int32) {
        switch code {
        case ECONNREFUSED: self = .refused
        case ETIMEDOUT: self = .timedOut
        default: self = .other
        }
    }
}
