import Glibc
import Platform

/// A failure in the socket runtime: the operation that failed (`bind 127.0.0.1:7480`, `TLS certificate
/// server.pem`) and what went wrong (the `strerror` text, OpenSSL's error string).
public typealias TransportError = PlacedError

extension PlacedError {
    /// An error from the current `errno`.
    static func system(_ place: String, _ code: Int32 = errno) -> PlacedError {
        PlacedError(place: place, problem: String(cString: strerror(code)))
    }
}
