import Foundation
import Platform
import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization
import WebSocket

/// Why a session is over for good.
public enum SessionEnd: Sendable, Equatable {
    /// This client left.
    case left
    /// The server closed the connection normally (close 1000) without this client asking to leave, with its
    /// reason.
    case closedByServer(reason: String)
    /// A moderator removed this client (close 4012).
    case removed
    /// The room ended (close 4009).
    case roomEnded
    /// The same identity connected from somewhere else (close 4011).
    case replaced
    /// The server refused the token or the join (closes 4000–4008, 4010) with this code and reason.
    case refused(code: UInt16, reason: String)
    /// No connection could be made, or it was lost and every retry failed: the transport's words, and why as a
    /// case (what a person is told is chosen from the case, never from the words).
    case connectionFailed(String, cause: ConnectionFailureCause = .unreachable(.other))
}

/// Why a session could not connect, as a case.
public enum ConnectionFailureCause: Sendable, Equatable {
    /// No connection could be made: what the transport said of the last attempt.
    case unreachable(TransportError.Cause)
    /// The connection had been made and was lost, and every retry failed; the last retry's cause.
    case lost(lastTry: TransportError.Cause)
}

/// What a session reports, in order, on its event loop's thread.
public enum SessionEvent: Sendable, Equatable {
    /// A message from the server. After a reconnect, the first `joined` arrives as `reconnected` instead.
    case message(ServerMessage)
    /// The connection dropped; the session tries again after `delay` (attempts count from 1).
    case reconnecting(attempt: Int, delay: Duration)
    /// The connection is back: the fresh `joined` snapshot that replaces all earlier state.
    case reconnected(ServerMessage)
    /// The session is over; nothing follows.
    case ended(SessionEnd)
}

/// How a session retries after losing its connection: exponential backoff with jitter.
public struct ReconnectPolicy: Sendable, Equatable {
    /// The delay before the first retry.
    public var initialDelay: Duration
    /// The longest delay between retries.
    public var maximumDelay: Duration
    /// How many retries before giving up; 0 never retries, `Int.max` keeps trying until the person leaves.
    public var maximumAttempts: Int
    /// The fraction of each delay added or taken away at random (0.5 gives ±50%).
    public var jitter: Double

    public init(
        initialDelay: Duration = .milliseconds(250), maximumDelay: Duration = .seconds(8), maximumAttempts: Int = 12,
        jitter: Double = 0.5
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.maximumAttempts = maximumAttempts
        self.jitter = jitter
    }

    /// The delay before retry `attempt` (from 1), given a random number in 0..<1.
    public func delay(attempt: Int, random: Double) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let base =
            min(initialDelay.inSeconds, 1e9) * Double(1 << exponent)
        let cap = maximumDelay.inSeconds
        let capped = min(base, cap)
        let factor = 1 + jitter * (2 * random - 1)
        return .milliseconds(Int64((capped * factor * 1000).rounded()))
    }
}

/// One client's connection to one room: connects with a token, decodes what the server says, sends requests,
/// and reconnects with backoff when the connection drops, until the room is over for it.
///
/// Events are delivered on the session's event-loop thread, one at a time; the handler must not block.
/// `send` and `leave` may be called from any thread.
public final class RoomSession: Sendable, ReconnectingSession {
    /// The room's address, `ws://host:port/rooms/ROOM`.
    public let url: String
    private let token: String
    /// Headers sent with every connection besides the token (an invite holder's guest key and name).
    private let headers: HTTPHeaders
    /// Receives the media messages and binary (media) frames, on the loop thread; see docs/media.md.
    private let media: (@Sendable (SessionMedia) -> Void)?
    private let roundTrip: (@Sendable (Duration) -> Void)?
    /// What the server sent that this client cannot use, said once a kind.
    private let ignored: IgnoredMessages
    let socket: ReconnectingSocket<Joining, SessionEvent>

    /// What a room session keeps beside its connection.
    struct Joining: ReconnectingSocketExtra {
        var awaitingReconnectSnapshot = false
        /// The sequence number of the last snapshot.
        var snapshotSeq: Int64 = 0
        /// The connection (its generation) that delivered the last snapshot: a connection has one snapshot, first.
        var snapshotGeneration: Int?
        /// This client's identity, from the last snapshot.
        var selfID: PeerID?
        /// Set when the connection of this generation delivered messages before `connect` stored it: requests
        /// sent then wait in `unsent` (the snapshot may arrive, and be answered, before the client is stored).
        var openedGeneration: Int?
        var unsent: [String] = []
        /// The requests sent, for those the server could not confirm to go out again under the same id.
        var requests = RequestLedger()

        mutating func connected() -> [String] {
            defer { unsent = [] }
            return unsent
        }

        mutating func disconnected() {
            openedGeneration = nil
            unsent = []
        }

        mutating func retrying() { awaitingReconnectSnapshot = true }
    }

    /// How long a session's connection may receive nothing (not a message, not a ping) before it is given up as
    /// lost and the session reconnects.
    public static let idleTimeout: Duration = .seconds(10)

    /// A session; nothing happens until `start()`. `roundTrip` receives the connection's smoothed ping
    /// round-trip time on the loop thread, about a second after each connect and then with every ping. `log`
    /// receives a line, once a kind, for what the server sent that the session ignores (stderr by default: the
    /// room screen's log file, line mode's and the bot's standard error).
    public init(
        url: String, token: String, headers: HTTPHeaders = HTTPHeaders(),
        tls: TLSClientConfiguration = TLSClientConfiguration(),
        reconnect: ReconnectPolicy = ReconnectPolicy(), media: (@Sendable (SessionMedia) -> Void)? = nil,
        roundTrip: (@Sendable (Duration) -> Void)? = nil,
        log: @escaping @Sendable (String) -> Void = IgnoredMessages.standardError,
        handler: @escaping @Sendable (SessionEvent) -> Void
    ) throws(TransportError) {
        self.media = media
        self.roundTrip = roundTrip
        self.ignored = IgnoredMessages(log: log)
        self.url = url
        self.token = token
        self.headers = headers
        // Every event's server strings are cleaned on the one way out of a session (see SessionText.swift).
        self.socket = try ReconnectingSocket(
            url: url, tls: tls, policy: reconnect, loopName: "clubroom-session",
            connectorLabel: "clubroom.session.connect", handler: { event in handler(event.sanitized) },
            reconnecting: { attempt, delay in .reconnecting(attempt: attempt, delay: delay) },
            ended: { end in .ended(end) })
    }

    /// Connects in the background; the outcome arrives as events.
    public func start() {
        startConnecting()
    }

    /// Sends a request; returns false (and sends nothing) while the connection is down. Without an `id`, the
    /// session gives it one of its own. A request the server answers `unconfirmed` is sent again under the same
    /// id, up to `RequestLedger.maximumRetries` times with a doubling wait (0.5 s first), before that answer is
    /// passed on; the answer `already_applied` to such a repeat is not passed on (the first copy took effect).
    @discardableResult
    public func send(_ request: ClientRequest, id: RequestID? = nil) -> Bool {
        let text = socket.state.withLock { state -> String in
            let id = id ?? state.extra.requests.newID()
            let text = String(decoding: ControlCodec.encode(ClientMessage(request, id: id)), as: UTF8.self)
            state.extra.requests.note(id, text: text)
            return text
        }
        return sendRaw(text)
    }

    /// Sends request `id` again after `delay`; while the connection is down then, waits as long again, counted as
    /// a retry, and once the retries are spent passes the server's `unconfirmed` on.
    private func resend(_ text: String, id: RequestID, after delay: Duration) {
        _ = socket.loop.schedule(after: delay) { [self] in
            if sendRaw(text) { return }
            switch socket.state.withLock({ $0.extra.requests.retryWhileDown(id) }) {
            case .success: resend(text, id: id, after: delay)
            case .failure(let unanswered): if let message = unanswered.message { socket.deliver(.message(message)) }
            }
        }
    }

    /// Sends text as it is, unchecked; returns false while the connection is down.
    @discardableResult
    public func sendRaw(_ text: String) -> Bool {
        let client = socket.state.withLock { state -> WebSocketClient?? in
            if let client = state.client { return .some(client) }
            // Open but not stored yet: the text goes out as soon as it is.
            guard state.extra.openedGeneration == state.generation, !state.ended else { return nil }
            state.extra.unsent.append(text)
            return .some(nil)
        }
        guard let client else { return false }
        client?.send(text: text)
        return true
    }

    /// Sends a binary message (media on the WebSocket path); returns false while the connection is down. Media
    /// is worth sending only now: once more than `WebSocketOptions.maxRealTimeBacklog` (16 KiB) waits for a
    /// server that reads too slowly, packets are dropped (and counted in `droppedMediaCount`) instead of queued, so
    /// the requests sent with `send` are never stuck behind stale audio. Requests are never dropped; past
    /// `maxWriteBufferSize` waiting the connection closes (1008) and the session reconnects.
    @discardableResult
    public func sendBinary(_ bytes: [UInt8]) -> Bool {
        guard let client = socket.client else { return false }
        client.send(realTime: bytes)
        return true
    }

    /// Media packets of the current connection dropped because the server read too slowly (see `sendBinary`).
    public var droppedMediaCount: Int { socket.client?.droppedRealTimeCount ?? 0 }

    /// Bytes of the current connection waiting to be written to the server: what a server that reads too slowly
    /// (or a congested link) holds back. 0 while down.
    public var waitingByteCount: Int { socket.client?.connection.bufferedByteCount ?? 0 }

    /// The current connection's smoothed ping round-trip time; `nil` while down or before the first pong.
    public var roundTripTime: Duration? { socket.client?.roundTripTime }

    /// Whether a connection is open for sending.
    public var isConnected: Bool { socket.client != nil }

    /// Leaves the room: sends `leave` and closes normally. The session then ends with `.left`.
    public func leave() {
        guard let client = socket.stop() else {
            socket.finish(.left)
            return
        }
        client.send(text: String(decoding: ControlCodec.encode(ClientMessage(.leave)), as: UTF8.self))
        client.close(code: .normal, reason: "left")
    }

    /// While the connection is down and a retry is scheduled, tries now instead; does nothing otherwise.
    public func retryNow() {
        retryScheduledNow()
    }

    /// Stops the session's thread. Call after the session has ended, from another thread.
    public func shutdown() {
        socket.shutdown()
    }

    func connect() {
        var options = WebSocketOptions()
        // A snapshot of a large room is far bigger than a request: accept up to 16 MiB from the server.
        options.maxMessageSize = ControlLimits.maxServerMessageBytes
        // The screen shows the round-trip time: measure it soon after connecting rather than after a whole interval.
        options.firstPingDelay = .seconds(1)
        // The server pings every 5 s: two missed pings mean the network has gone, and the person is told
        // "reconnecting" within 15 s of it going silent, timer granularity included (docs/limits.md).
        options.idleTimeout = Self.idleTimeout
        open(options: options, headers: headers, bearer: token)
    }

    func connectionHandler(generation: Int) -> WebSocketClient.Handler {
        WebSocketClient.Handler(
            onMessage: { [self] payload in received(payload, generation: generation) },
            onClose: { [self] code, reason in closed(code: code, reason: reason, generation: generation) },
            onRoundTrip: { [self] time in measured(time, generation: generation) })
    }

    private func received(_ payload: WebSocketPayload, generation: Int) {
        let text: String
        switch payload {
        case .binary(let bytes):
            media?(.packet(bytes))
            return
        case .text(let received): text = received
        }
        var message: ServerMessage
        do {
            message = try ControlCodec.decodeServer(Array(text.utf8))
        } catch {
            // What cannot be read is skipped and said once in the log, never shown as the server's words: a
            // newer server's event types, media messages this client cannot use, and anything malformed.
            guard error.code == .unknownType else {
                ignored.note(
                    .unreadable,
                    "a message from the server that it cannot read (\(ServerText.line(error.message, maxCharacters: 200)))"
                )
                return
            }
            do throws(MediaSignalError) {
                guard let signal = try MediaSignalCodec.decode(text) else {
                    ignored.note(
                        .unknownType,
                        "a message from the server of a type it does not know (\(ServerText.line(error.message, maxCharacters: 200)))"
                    )
                    return
                }
                media?(SessionMedia.signal(signal).sanitized)
            } catch {
                ignored.note(
                    .media,
                    "a media message from the server that it cannot use (\(ServerText.line(error.message, maxCharacters: 200)))"
                )
            }
            return
        }
        let reconnected = socket.state.withLock { state -> Bool?? in
            guard state.generation == generation, !state.ended else { return nil }
            if state.client == nil { state.extra.openedGeneration = generation }
            if case .joined(let snapshot) = message.event {
                // A connection's snapshot comes first and once: a second one is out of place.
                if state.extra.snapshotGeneration == generation { return .some(nil) }
                state.extra.snapshotGeneration = generation
                state.extra.selfID = snapshot.selfID
                state.established()
                state.extra.snapshotSeq = message.seq ?? 0
                defer { state.extra.awaitingReconnectSnapshot = false }
                return state.extra.awaitingReconnectSnapshot
            }
            return false
        }
        guard let outcome = reconnected else { return }
        guard let reconnected = outcome else {
            ignored.note(.secondSnapshot, "a second joined snapshot from the server on one connection")
            return
        }
        // Events numbered at or below the snapshot's number are already in it (the server may announce joins a
        // moment late, after a newer joiner's snapshot).
        let covered = socket.state.withLock { $0.extra.snapshotSeq }
        if let seq = message.seq, seq <= covered, !isSnapshot(message) { return }
        if case .peersJoined(let peers) = message.event, let seq = message.seq {
            let first = seq - Int64(peers.count) + 1
            let fresh = peers.enumerated().filter { first + Int64($0.offset) > covered }.map { $0.element }
            guard !fresh.isEmpty else { return }
            message = ServerMessage(.peersJoined(fresh), seq: seq)
        }
        if case .peersLeft(let departures) = message.event, let seq = message.seq {
            let first = seq - Int64(departures.count) + 1
            let fresh = departures.enumerated().filter { first + Int64($0.offset) > covered }.map { $0.element }
            guard !fresh.isEmpty else { return }
            message = ServerMessage(.peersLeft(fresh), seq: seq)
        }
        // Only `removed` and `room_ended` end a session; the server closes a connection it no longer counts.
        if let me = socket.state.withLock({ $0.extra.selfID }) {
            let ownDeparture = "the server's word that this client left (only removed and room_ended end a session)"
            if case .peerLeft(me, _) = message.event {
                ignored.note(.ownDeparture, ownDeparture)
                return
            }
            if case .peersLeft(let departures) = message.event, departures.contains(where: { $0.peer == me }) {
                ignored.note(.ownDeparture, ownDeparture)
                let others = departures.filter { $0.peer != me }
                guard !others.isEmpty else { return }
                message = ServerMessage(.peersLeft(others), seq: message.seq)
            }
        }
        if case .error(let code, _, let id?) = message.event {
            switch socket.state.withLock({ $0.extra.requests.answered(code, id: id, message: message) }) {
            case .deliver: break
            case .drop: return
            case .replace(let first):
                socket.deliver(reconnected ? .reconnected(first) : .message(first))
                return
            case .retry(let text, let delay):
                resend(text, id: id, after: delay)
                return
            }
        }
        socket.deliver(reconnected ? .reconnected(message) : .message(message))
    }

    private func measured(_ time: Duration, generation: Int) {
        guard let roundTrip, socket.state.withLock({ $0.generation == generation && !$0.ended }) else { return }
        roundTrip(time)
    }

    private func isSnapshot(_ message: ServerMessage) -> Bool {
        if case .joined = message.event { return true }
        return false
    }

    private func closed(code: WebSocketCloseCode, reason: String, generation: Int) {
        guard let session = socket.closed(generation: generation) else { return }
        let (leaving, everJoined) = (session.stopping, session.everConnected)
        if leaving {
            socket.finish(.left)
            return
        }
        if !everJoined, (4000...4099).contains(code.rawValue) {
            socket.finish(.refused(code: code.rawValue, reason: reason))
            return
        }
        switch code.rawValue {
        case 1000: socket.finish(.closedByServer(reason: reason))
        case 4009: socket.finish(.roomEnded)
        case 4011: socket.finish(.replaced)
        case 4012: socket.finish(.removed)
        case 4000...4008, 4010, 4013...4099: socket.finish(.refused(code: code.rawValue, reason: reason))
        default:
            if everJoined {
                retry(after: "closed \(code.rawValue) \(reason)")
            } else {
                socket.finish(.connectionFailed("the server closed the connection (\(code.rawValue) \(reason))"))
            }
        }
    }
}

/// Media traffic on the control connection, handed to the client's media engine.
public enum SessionMedia: Sendable, Equatable {
    /// A `media` or `media_key` message.
    case signal(MediaSignal)
    /// A binary message: an SRTP or SRTCP packet on the WebSocket path.
    case packet([UInt8])
}

/// What the server sent that a session ignores, by kind; each kind is said once in the log, with the first
/// example's detail, so a burst of them costs one line.
public final class IgnoredMessages: Sendable {
    /// Why a message was ignored.
    public enum Kind: String, Sendable, CaseIterable {
        /// Not JSON, not one object, nested too deep, a field of the wrong type: nothing in it is used.
        case unreadable
        /// A type this version does not know (a newer server's).
        case unknownType
        /// A `media` or `media_key` message whose fields cannot be used.
        case media
        /// A `joined` on a connection that already had one.
        case secondSnapshot
        /// A `peer_left` naming this client.
        case ownDeparture
    }

    private let log: @Sendable (String) -> Void
    private let tally = Mutex<[Kind: Int]>([:])

    /// Writes to the process's standard error: the room screen's log file while the screen is up.
    public static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    public init(log: @escaping @Sendable (String) -> Void) {
        self.log = log
    }

    /// How many of each kind were ignored so far.
    public var counts: [Kind: Int] { tally.withLock { $0 } }

    /// Counts one ignored message; the first of its kind is logged as "ignored WHAT; more like it are ignored
    /// without a word".
    func note(_ kind: Kind, _ what: String) {
        let first = tally.withLock { counts -> Bool in
            counts[kind, default: 0] += 1
            return counts[kind] == 1
        }
        guard first else { return }
        log("clubroom: ignored \(what); more like it are ignored without a word")
    }
}
