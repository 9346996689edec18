import Dispatch
import Foundation
import RoomClient
import RoomCore
import RoomProtocol
import RoomTesting
import RoomTransport
import Synchronization
import Testing

/// What a room session reported, in order.
final class SessionEvents: Sendable {
    private let events = Mutex<[SessionEvent]>([])

    func record(_ event: SessionEvent) { events.withLock { $0.append(event) } }

    var all: [SessionEvent] { events.withLock { $0 } }

    /// Waits up to `seconds` for an event that `match` accepts.
    func wait(seconds: Double = 10, _ match: (SessionEvent) -> Bool) -> SessionEvent? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let found = all.first(where: match) { return found }
            usleep(5_000)
        }
        return nil
    }
}

/// Polls `condition` every 5 ms for up to `seconds`.
func eventually(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// A server's `joined` snapshot for `eli` alone in `lobby`, as the raw peer writes it.
func joinedFrame() -> [UInt8] {
    let snapshot = JoinedSnapshot(
        room: "lobby", selfID: "eli", peers: [AnnouncedPeer(Peer(id: "eli", name: "Eli", role: .speaker, joinedAt: 1))],
        topic: "", chat: [], roles: shippedRoles, resumed: false)
    return rawFrame(opcode: 1, ControlCodec.encode(ServerMessage(.joined(snapshot), seq: 1)))
}

/// A server that stops reading but not writing: an unsolicited pong every second (which a client does not
/// answer), so the client's idle timer never fires, until `resume` is signalled or a minute passes.
func keepTalking(_ connection: RawPeerConnection, until resume: DispatchSemaphore) {
    for _ in 0..<60 {
        if resume.wait(timeout: .now() + 1) == .success { return }
        connection.send(rawFrame(opcode: 10, Array("still here".utf8)))
    }
}

/// The client's upload when media goes over the WebSocket (UDP blocked) and the server stops reading: bounded
/// like the server's own `send(realTime:)`. Audio is dropped once 16 KiB wait; requests are never dropped; and
/// requests that pile up past the write buffer's limit end the connection with a close frame, not silently.
@Suite(.ownThread, .serialized) struct UploadBoundTests {
    static let packet = [UInt8](repeating: 0x5A, count: 2000)
    /// A masked frame of one packet: 2 bytes of header, 2 of length, 4 of mask.
    static let packetFrame = packet.count + 8

    @Test func audioToAServerThatStopsReadingIsDroppedAndRequestsStillGoThrough() throws {
        let resume = DispatchSemaphore(value: 0)
        let written = Mutex<(bytes: [UInt8], ended: Bool)>(([], false))
        let peer = try RawWebSocketPeer(receiveBuffer: 4096) { connection in
            connection.send(joinedFrame())
            // The server stops reading until the test has seen the backlog.
            keepTalking(connection, until: resume)
            let answer = connection.readUntilEnd(seconds: 10)
            written.withLock { $0 = answer }
        }
        let events = SessionEvents()
        let session = try RoomSession(url: peer.url, token: "t") { events.record($0) }
        defer { session.shutdown() }
        session.start()
        try #require(
            events.wait {
                if case .message(let message) = $0, case .joined = message.event { true } else { false }
            } != nil, "no snapshot: \(events.all)")
        try #require(eventually { session.isConnected })
        let connected = Date()
        // The kernel would grow the socket's send buffer as it goes, taking more at any later write; fixed, what
        // it takes is known once it is full.
        try #require(peer.fixClientSendBuffer(bytes: 64 * 1024))

        // 800 KB of audio: more than the kernel's buffers take (about 130 KB) and the 16 KiB backlog together.
        var sent = 0
        for _ in 0..<400 where session.sendBinary(Self.packet) { sent += 1 }
        _ = Self.settled(session, after: connected)
        // The first ping made the kernel take part of the backlog: fill it again.
        for _ in 0..<50 where session.sendBinary(Self.packet) { sent += 1 }
        #expect(sent == 450)
        let before = Self.settled(session, after: connected)
        let dropped = session.droppedMediaCount
        try #require(dropped > 0, "no packet was dropped: \(before) bytes waiting")
        // What waits is at most the backlog and one packet's frame.
        #expect(before <= 16 * 1024 + Self.packetFrame)
        // (Ids given, so that the bytes are known: without one, the session gives each request an id of its own.)
        session.send(.chat("after the audio", to: .everyone), id: .integer(1))
        // The request was not dropped: it waits behind the audio, all of it.
        let chat = ControlCodec.encode(ClientMessage(.chat("after the audio", to: .everyone), id: .integer(1)))
        #expect(eventually { session.waitingByteCount == before + chat.count + Self.overhead(chat.count) })
        // With more than the backlog waiting, every further packet is dropped, and each is counted.
        for _ in 0..<100 { session.sendBinary(Self.packet) }
        session.send(.chat("after more audio", to: .everyone), id: .integer(2))
        let second = ClientMessage(.chat("after more audio", to: .everyone), id: .integer(2))
        #expect(eventually { session.droppedMediaCount == dropped + 100 })
        let droppedInAll = session.droppedMediaCount
        #expect(events.all.allSatisfy { if case .reconnecting = $0 { false } else { true } })

        // The server reads again: the requests arrive whole and in order, after the audio that was not dropped.
        resume.signal()
        #expect(eventually { session.waitingByteCount == 0 })
        session.leave()
        #expect(peer.waitUntilDone(seconds: 20))
        let answer = written.withLock { $0 }
        #expect(answer.ended)
        let (messages, error) = RawPeerConnection.messages(in: answer.bytes)
        #expect(error == nil)
        let packets = messages.filter { if case .binary = $0 { true } else { false } }
        #expect(packets.count + droppedInAll == sent + 100)
        #expect(packets.allSatisfy { $0 == .binary(Self.packet) })
        let texts = messages.compactMap { message -> [UInt8]? in
            guard case .text(let text) = message else { return nil }
            return Array(text.utf8)
        }
        #expect(texts == [chat, ControlCodec.encode(second), ControlCodec.encode(ClientMessage(.leave))])
        #expect(messages.last == .close(code: .normal, reason: "left"))
    }

    /// A masked client frame's header for a payload of `count` bytes.
    static func overhead(_ count: Int) -> Int { (count <= 125 ? 2 : count <= 65535 ? 4 : 10) + 4 }

    /// Waits until packets are being dropped and what waits and what was dropped have then held still for
    /// 300 ms: the loop has taken every packet handed to it (once the backlog is full, each one it takes is
    /// counted as dropped). Returns what waits.
    ///
    /// It also waits until 2.5 s after `connected`: the client's first ping, a second after connecting, is a
    /// write, and it fills whatever room the kernel had made in the meantime without saying so (a socket is
    /// reported writable only once a third of its buffer is free). After it the kernel is full and stays full;
    /// the next ping is not due until 6 s after connecting.
    static func settled(_ session: RoomSession, after connected: Date) -> Int {
        var last = (session.waitingByteCount, session.droppedMediaCount)
        var still = Date()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline
            && (last.1 == 0 || Date().timeIntervalSince(still) < 0.3 || Date().timeIntervalSince(connected) < 2.5)
        {
            usleep(10_000)
            let now = (session.waitingByteCount, session.droppedMediaCount)
            if now != last {
                last = now
                still = Date()
            }
        }
        return last.0
    }

    @Test func requestsPilingUpPastTheWriteBufferEndInACloseFrame() throws {
        let resume = DispatchSemaphore(value: 0)
        let written = Mutex<(bytes: [UInt8], ended: Bool)>(([], false))
        let peer = try RawWebSocketPeer(receiveBuffer: 4096) { connection in
            connection.send(joinedFrame())
            keepTalking(connection, until: resume)
            let answer = connection.readUntilEnd(seconds: 10)
            written.withLock { $0 = answer }
        }
        let events = SessionEvents()
        // No retry during the test: its peer answers one connection.
        let session = try RoomSession(
            url: peer.url, token: "t",
            reconnect: ReconnectPolicy(initialDelay: .seconds(60), maximumDelay: .seconds(60))
        ) { events.record($0) }
        defer { session.shutdown() }
        session.start()
        try #require(
            events.wait {
                if case .message(let message) = $0, case .joined = message.event { true } else { false }
            } != nil, "no snapshot: \(events.all)")
        try #require(eventually { session.isConnected })
        // Requests of 2 KB each, 16 MB in all: more than the kernel's buffers (about 4 MB here) and the 4 MiB
        // write buffer together.
        let line = String(repeating: "x", count: 2000)
        for _ in 0..<8000 { session.send(.chat(line, to: .everyone), id: .integer(1)) }
        let lost = events.wait(seconds: 60) { if case .reconnecting = $0 { true } else { false } }
        #expect(lost != nil, "the session did not notice its requests could not go out: \(events.all.suffix(2))")
        resume.signal()
        #expect(peer.waitUntilDone(seconds: 30))
        let answer = written.withLock { $0 }
        let (messages, error) = RawPeerConnection.messages(in: answer.bytes)
        #expect(error == nil)
        // Whole requests, in order, then the close frame that says why; nothing cut, nothing after it.
        let chat = String(
            decoding: ControlCodec.encode(ClientMessage(.chat(line, to: .everyone), id: .integer(1))), as: UTF8.self)
        // (The client's own pings, every 5 s, go out among them.)
        let requests = messages.dropLast().filter { if case .ping = $0 { false } else { true } }
        #expect(requests.allSatisfy { $0 == .text(chat) }, "\(requests.filter { $0 != .text(chat) }.prefix(3))")
        #expect(messages.count > 1)
        #expect(
            messages.last == .close(code: .policyViolation, reason: "peer reads too slowly: over 4194304 bytes waiting")
        )
    }
}
