import RoomProtocol

/// The requests a session sent, by id, so that one the server could not confirm (`unconfirmed`) goes out again
/// under the same id: the server applies an identity's request id at most once, so the repeat either takes
/// effect now or is answered `already_applied`, never a second time. Every request gets an id: the caller's, or
/// the session's own (`<tag>-<n>`, with a tag drawn at random for each session, so that a restarted client does
/// not reuse the ids of the one before).
struct RequestLedger: Sendable {
    /// How many requests are remembered (the most recent).
    static let kept = 64
    /// How many times one request is sent again before its `unconfirmed` is passed on.
    static let maximumRetries = 4
    /// The wait before the first retry; it doubles with each one (0.5, 1, 2 and 4 s: 7.5 s in all).
    static let firstRetryDelay: Duration = .milliseconds(500)

    struct Sent: Sendable {
        var id: RequestID
        var text: String
        var retries = 0
        /// The server's first `unconfirmed` for it: once said, the request's outcome stays unknown until the
        /// server decides a copy of it, whatever a later copy is refused with for being unable to reach the room
        /// (`internal`), and it is what is passed on when the retries are spent.
        var unconfirmed: ServerMessage?
        /// Whether its answer was passed on (or it took effect): later answers for its id are repeats' answers.
        var settled = false
        /// Whether the server's decision on it was heard (it took effect, or a refusal was passed on): after that,
        /// every answer for its id answers a copy, and is dropped. Settled without a decision (its `unconfirmed`
        /// was passed on), the decision is still news when it comes.
        var decided = false
    }

    /// What to do with the server's `error` for a request.
    enum Verdict: Sendable, Equatable {
        /// Pass it on: a real answer, or not a request of this session's.
        case deliver
        /// Send `text` again after `delay` instead of passing the answer on.
        case retry(text: String, after: Duration)
        /// Pass this on instead: the first `unconfirmed`, when a later copy could not reach the room either.
        case replace(ServerMessage)
        /// Drop it: the answer to a repeat of a request that took effect the first time.
        case drop
    }

    let tag: String
    private var next = 1
    private var sent: [Sent] = []

    init(tag: String = RequestLedger.randomTag()) {
        self.tag = tag
    }

    /// A session's own id for its next request.
    mutating func newID() -> RequestID {
        defer { next += 1 }
        return .string("\(tag)-\(next)")
    }

    /// `text` (a request carrying `id`) was sent.
    mutating func note(_ id: RequestID, text: String) {
        sent.removeAll { $0.id == id }
        sent.append(Sent(id: id, text: text))
        if sent.count > Self.kept { sent.removeFirst(sent.count - Self.kept) }
    }

    /// The server's `error` `message`, with `code`, for request `id`.
    mutating func answered(_ code: ErrorCode, id: RequestID, message: ServerMessage) -> Verdict {
        guard let index = sent.firstIndex(where: { $0.id == id }) else { return .deliver }
        if sent[index].settled {
            if sent[index].decided || code == .alreadyApplied || code == .unconfirmed || code == .internal {
                return .drop
            }
            sent[index].decided = true
            return .deliver
        }
        let unknown = code == .unconfirmed || (code == .internal && sent[index].unconfirmed != nil)
        switch code {
        case _ where unknown:
            if sent[index].unconfirmed == nil { sent[index].unconfirmed = message }
            guard sent[index].retries < Self.maximumRetries else {
                sent[index].settled = true
                let first = sent[index].unconfirmed ?? message
                return first == message ? .deliver : .replace(first)
            }
            sent[index].retries += 1
            return .retry(text: sent[index].text, after: Self.delay(retry: sent[index].retries))
        case .alreadyApplied:
            // Only a repeat is answered so (this session's, or one a cluster node sent again for it): the first
            // copy took effect, and its events came, or are in the snapshot of a reconnect.
            sent[index].settled = true
            sent[index].decided = true
            return .drop
        default:
            sent[index].settled = true
            sent[index].decided = true
            return .deliver
        }
    }

    /// A retry of request `id` found the connection down: whether it may be tried again (it counts as a retry),
    /// or else the `unconfirmed` to pass on.
    mutating func retryWhileDown(_ id: RequestID) -> Result<String, Unanswered> {
        guard let index = sent.firstIndex(where: { $0.id == id }), !sent[index].settled else {
            return .failure(Unanswered(message: nil))
        }
        guard sent[index].retries < Self.maximumRetries else {
            sent[index].settled = true
            return .failure(Unanswered(message: sent[index].unconfirmed))
        }
        sent[index].retries += 1
        return .success(sent[index].text)
    }

    /// The retries of a request are spent while the connection is down: its `unconfirmed`, to pass on.
    struct Unanswered: Error {
        var message: ServerMessage?
    }

    static func delay(retry: Int) -> Duration {
        firstRetryDelay * (1 << min(max(retry - 1, 0), 10))
    }

    static func randomTag() -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<10).map { _ in letters[Int(generator.next() % UInt64(letters.count))] })
    }
}
