import Dispatch
import Foundation
import RoomTransport
import Synchronization
import Testing
import WebSocket

/// Events seen by a test, collected from the loop thread and awaited with a timeout.
final class Recorder<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])
    private let signal = DispatchSemaphore(value: 0)

    func record(_ event: Event) {
        events.withLock { $0.append(event) }
        signal.signal()
    }

    var all: [Event] { events.withLock { $0 } }

    /// Waits until `count` events arrived or `seconds` passed; returns what arrived.
    @discardableResult
    func wait(for count: Int, seconds: Double = 5) -> [Event] {
        let deadline = DispatchTime.now() + seconds
        while self.all.count < count {
            if signal.wait(timeout: deadline) == .timedOut { break }
        }
        return all
    }
}

enum ClientEvent: Sendable, Equatable {
    case message(WebSocketPayload)
    case closed(UInt16, String)
}

enum ServerEvent: Sendable, Equatable {
    case opened(String)
    case message(WebSocketPayload)
    case closed(UInt16, String)
    /// A connection that ended before it opened, with the problem and the seconds since the server started.
    case failedHandshake(String, seconds: Int)

    /// The problem of a failed handshake; nil for any other event.
    var failedHandshakeProblem: String? {
        if case .failedHandshake(let problem, _) = self { problem } else { nil }
    }
}

/// Waits for the server's first event and expects it to be the only one: a failed handshake whose problem
/// passes `check`.
func expectOneFailedHandshake(
    _ recorder: Recorder<ServerEvent>, sourceLocation: SourceLocation = #_sourceLocation,
    _ check: (String) -> Bool
) {
    let seen = recorder.wait(for: 1)
    #expect(seen.count == 1, sourceLocation: sourceLocation)
    if let problem = seen.first?.failedHandshakeProblem {
        #expect(check(problem), "\(problem)", sourceLocation: sourceLocation)
    } else {
        Issue.record("no failed handshake reported: \(seen)", sourceLocation: sourceLocation)
    }
}

/// An echo server: echoes every message; `close CODE REASON` makes it close with that code.
func startEchoServer(
    tls: TLSServerConfiguration? = nil, options: WebSocketOptions = WebSocketOptions(),
    recorder: Recorder<ServerEvent> = Recorder()
) throws -> WebSocketServer {
    let started = ContinuousClock.now
    return try WebSocketServer(
        host: "127.0.0.1", port: 0, tls: tls, options: options,
        handler: WebSocketServer.Handler(
            onUpgrade: { request, _ in
                if request.path == "/forbidden" { return .reject(status: 403, reason: "not for you") }
                return .accept
            },
            onOpen: { connection in recorder.record(.opened(connection.request?.target ?? "")) },
            onMessage: { connection, payload in
                recorder.record(.message(payload))
                if case .text(let text) = payload, text.hasPrefix("close ") {
                    let parts = text.split(separator: " ", maxSplits: 2)
                    let code = UInt16(parts[1]) ?? 1000
                    connection.close(code: WebSocketCloseCode(code), reason: parts.count > 2 ? String(parts[2]) : "")
                } else if case .text(let text) = payload, text.hasPrefix("stream "), let count = Int(text.dropFirst(7))
                {
                    // Audio-like: small messages worth sending only now, then how much waits for the peer.
                    for index in 0..<count {
                        connection.send(realTime: [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 1000))
                    }
                    connection.send(
                        text: "waiting \(connection.bufferedByteCount) dropped \(connection.droppedRealTimeCount)")
                } else if case .text(let text) = payload, text.hasPrefix("later "), let count = Int(text.dropFirst(6)) {
                    // A crowd's announcement: queued now, written on the loop's next turn; then how much waited
                    // right after queueing, sent at once (it follows them).
                    for index in 0..<count { connection.sendLater(PreparedMessage(text: "later \(index)")) }
                    connection.send(text: "queued \(connection.bufferedByteCount)")
                } else if case .text(let text) = payload, text.hasPrefix("hold "), let count = Int(text.dropFirst(5)) {
                    for index in 0..<count { connection.sendLater(PreparedMessage(text: "held \(index)")) }
                } else if case .text(let text) = payload, text.hasPrefix("big "), let count = Int(text.dropFirst(4)) {
                    connection.send(binary: [UInt8](repeating: 9, count: count))
                } else if case .text(let text) = payload, text.hasPrefix("flood") {
                    for _ in 0..<256 { connection.send(binary: [UInt8](repeating: 7, count: 64 * 1024)) }
                } else {
                    switch payload {
                    case .text(let text): connection.send(text: text)
                    case .binary(let bytes): connection.send(binary: bytes)
                    }
                }
            },
            onClose: { _, code, reason in recorder.record(.closed(code.rawValue, reason)) },
            onFailedHandshake: { _, problem in
                recorder.record(.failedHandshake(problem, seconds: Int(started.duration(to: .now).components.seconds)))
            }
        ))
}

func connectClient(
    _ url: String, tls: TLSClientConfiguration = TLSClientConfiguration(),
    options: WebSocketOptions = WebSocketOptions(), headers: HTTPHeaders = HTTPHeaders()
) throws -> (WebSocketClient, Recorder<ClientEvent>) {
    let recorder = Recorder<ClientEvent>()
    let client = try WebSocketClient.connect(
        to: url, headers: headers, tls: tls, options: options,
        handler: WebSocketClient.Handler(
            onMessage: { recorder.record(.message($0)) },
            onClose: { recorder.record(.closed($0.rawValue, $1)) }))
    return (client, recorder)
}

/// The folder holding the Python interop scripts.
let interopDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("interop")
