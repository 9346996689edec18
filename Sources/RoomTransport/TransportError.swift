import Glibc

/// A failure in the socket runtime, with where it happened and what went wrong.
public struct TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The operation that failed, e.g. `bind 127.0.0.1:7480` or `TLS certificate server.pem`.
    public var place: String
    /// What went wrong, e.g. the `strerror` text or OpenSSL's error string.
    public var problem: String

    public init(place: String, problem: String) {
        self.place = place
        self.problem = problem
    }

    public var description: String { "\(place): \(problem)" }

    /// An error from the current `errno`.
    static func system(_ place: String, _ code: Int32 = errno) -> TransportError {
        TransportError(place: place, problem: String(cString: strerror(code)))
    }
}
