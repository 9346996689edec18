/// A failure that says where it happened and what went wrong, read as "PLACE: PROBLEM":
/// `bind 127.0.0.1:7480: Address already in use`, `secret file: permission denied`.
///
/// The one shape for such errors: the server's start, the screen's runtime and the demo each name it for what
/// they do (`ServerStartError`, `RuntimeError`, `DemoError`), so a signature says which part can fail, and one
/// description serves them all. The transport's `TransportError` reads the same and adds why a connection could
/// not be made, as a case.
public struct PlacedError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done or touched: an operation, an address, a file, a component.
    public var place: String
    /// What went wrong there, in words: the `strerror` text, a library's message, a sentence.
    public var problem: String

    public init(place: String, problem: String) {
        self.place = place
        self.problem = problem
    }

    public var description: String { "\(place): \(problem)" }
}
