import Dispatch
import Foundation
import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization
import WebSocket

/// The quiet part of the audience: many connections on one event loop, so a room of thousands does not need a
/// thread per listener. They listen without reading what they hear, and speak only when the director makes them
/// (a chat line, accepting an invitation).
final class AudienceCrowd: Sendable {
    private let url: String
    private let loop: EventLoop
    private let clients = Mutex<[String: WebSocketClient]>([:])
    private let stopping = Atomic<Bool>(false)
    private let connecting = DispatchGroup()

    /// A crowd for the room at `url`; nobody joins before `join`.
    init(url: String) throws(DemoError) {
        self.url = url
        do {
            loop = try EventLoop(name: "demo-crowd")
        } catch {
            throw DemoError(place: "audience", problem: error.description)
        }
    }

    /// Joins the members one after another in the background; `tokens` pairs identities with their tokens.
    /// `failed` hears about each one who could not join.
    func join(_ tokens: [(identity: String, token: String)], failed: @escaping @Sendable (String, String) -> Void) {
        DispatchQueue.global().async(group: connecting) { [self] in
            for (identity, token) in tokens {
                if stopping.load(ordering: .acquiring) { return }
                var options = WebSocketOptions()
                // Every joiner's snapshot lists the whole room: allow a large one.
                options.maxMessageSize = ControlLimits.maxServerMessageBytes
                var headers = HTTPHeaders()
                headers.add("Authorization", "Bearer \(token)")
                let handler = WebSocketClient.Handler(
                    onMessage: { _ in },
                    onClose: { [self] _, _ in _ = clients.withLock { $0.removeValue(forKey: identity) } })
                do {
                    let client = try WebSocketClient.connect(
                        to: url, headers: headers, options: options, loop: loop, handler: handler)
                    clients.withLock { $0[identity] = client }
                } catch {
                    failed(identity, "\(error)")
                }
            }
        }
    }

    /// Who is connected now.
    var present: [String] { clients.withLock { Array($0.keys) } }

    /// Sends `request` as `identity`; false when that member is not connected.
    @discardableResult
    func send(_ request: ClientRequest, as identity: String) -> Bool {
        guard let client = clients.withLock({ $0[identity] }) else { return false }
        client.send(text: String(decoding: ControlCodec.encode(ClientMessage(request)), as: UTF8.self))
        return true
    }

    /// Everyone leaves; waits for joins in progress, then stops the loop.
    func shutdown() {
        stopping.store(true, ordering: .releasing)
        _ = connecting.wait(timeout: .now() + 5)
        let all = clients.withLock { clients -> [WebSocketClient] in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        let leave = String(decoding: ControlCodec.encode(ClientMessage(.leave)), as: UTF8.self)
        for client in all {
            client.send(text: leave)
            client.close(code: .normal, reason: "left")
        }
        // A moment for the goodbyes to go out before the loop drops what is left.
        if !all.isEmpty { usleep(100_000) }
        loop.shutdown()
    }
}
