import Foundation
import RoomClient
import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization

/// The real connection: a `RoomSession` (WebSocket, reconnecting) whose wire messages are turned into RoomCore's
/// events, and RoomCore's requests into wire requests.
public final class SessionConnection: RoomConnection, @unchecked Sendable {
    // @unchecked: `session` is set once in `start` before any event can arrive and only read afterwards, under the
    // lock; the name map is behind its own mutex.
    private let url: String
    private let token: String
    private let tls: TLSClientConfiguration
    private let session = Mutex<RoomSession?>(nil)
    private let names = Mutex<[String: String]>([:])
    private let selfID = Mutex<String?>(nil)

    public init(url: String, token: String, tls: TLSClientConfiguration = TLSClientConfiguration()) {
        self.url = url
        self.token = token
        self.tls = tls
    }

    public func start(deliver: @escaping @Sendable (ConnectionEvent) -> Void) {
        do {
            let session = try RoomSession(url: url, token: token, tls: tls) { [self] event in
                for converted in convert(event) { deliver(converted) }
            }
            self.session.withLock { $0 = session }
            session.start()
        } catch {
            deliver(.ended("Cannot connect to \(url): \(error.description)"))
        }
    }

    public func send(_ request: ClientRequest) {
        guard let session = session.withLock({ $0 }) else { return }
        if case .leave = request {
            session.leave()
        } else {
            session.send(Self.wire(request))
        }
    }

    public func leave() {
        guard let session = session.withLock({ $0 }) else { return }
        session.leave()
    }

    public func shutdown() {
        session.withLock { $0 }?.shutdown()
    }

    /// A request in its wire form.
    public static func wire(_ request: ClientRequest) -> WireRequest {
        switch request {
        case .raiseHand: .raiseHand
        case .lowerHand: .lowerHand
        case .invite(let id): .invite(peer: id.rawValue)
        case .setRole(let id, let role): .setRole(peer: id.rawValue, role: role.rawValue)
        case .acceptInvite: .acceptInvite
        case .declineInvite: .declineInvite
        case .stepDown: .stepDown
        case .setMute(let muted): .setMute(muted: muted)
        case .mutePeer(let id): .mutePeer(peer: id.rawValue)
        case .remove(let id, let reason): .remove(peer: id.rawValue, reason: reason ?? "")
        case .setTopic(let text): .setTopic(text: text)
        case .endRoom(let reason): .endRoom(reason: reason ?? "")
        case .chat(let text, let audience):
            switch audience {
            case .everyone: .chat(text: text, to: .everyone)
            case .peer(let id): .chat(text: text, to: .peer(id.rawValue))
            case .role(let role): .chat(text: text, to: .role(role.rawValue))
            }
        case .leave: .leave
        }
    }

    private func convert(_ event: SessionEvent) -> [ConnectionEvent] {
        switch event {
        case .message(let message): return convert(message)
        case .reconnecting(let attempt, _): return [.server(.reconnecting(attempt: attempt), seq: 0)]
        case .reconnected(let message): return [.server(.reconnected, seq: 0)] + convert(message)
        case .ended(let end): return [.ended(Self.describe(end))]
        }
    }

    /// Why a session ended, in plain words with what to do next.
    public static func describe(_ end: SessionEnd) -> String {
        switch end {
        case .left: "You left the room."
        case .removed: "You were removed from the room."
        case .roomEnded: "The room has ended."
        case .replaced: "You joined this room from somewhere else, so this screen was closed."
        case .refused(let code, let reason):
            "The server refused to let you in (\(code)\(reason.isEmpty ? "" : ": \(reason)")). Check the token or ask the host."
        case .connectionFailed(let problem): "Cannot reach the room: \(problem). Check the address and try again."
        }
    }

    private func name(_ id: String) -> String { names.withLock { $0[id] } ?? id }

    private func optionalPeer(_ id: String) -> PeerID? { id.isEmpty ? nil : PeerID(id) }

    private func convert(_ message: ServerMessage) -> [ConnectionEvent] {
        let seq = UInt64(max(0, message.seq ?? 0))
        let me = selfID.withLock { $0 }
        switch message.event {
        case .joined(let snapshot):
            names.withLock { map in
                map = Dictionary(snapshot.peers.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
            }
            selfID.withLock { $0 = snapshot.selfID }
            var events: [ConnectionEvent] = []
            if let roles = Self.roleTable(snapshot.roles) { events.append(.roles(roles)) }
            let peers = snapshot.peers.map(Self.peer)
            let recent = snapshot.chat.map { self.chat(for: $0) }
            let room = RoomSnapshot(
                roomID: snapshot.room, topic: snapshot.topic, selfID: PeerID(snapshot.selfID), peers: peers,
                recentChat: recent, seq: seq)
            events.append(.server(.joined(room), seq: seq))
            return events
        case .peerJoined(let peer):
            names.withLock { $0[peer.id] = peer.name }
            return [.server(.peerJoined(Self.peer(peer)), seq: seq)]
        case .peersJoined(let joined):
            names.withLock { map in for peer in joined { map[peer.id] = peer.name } }
            // The i-th of k peers announced under `seq` S has number S − k + 1 + i.
            let first = seq + 1 - min(seq + 1, UInt64(joined.count))
            return joined.enumerated().map { index, peer in
                .server(.peerJoined(Self.peer(peer)), seq: first + UInt64(index))
            }
        case .peerLeft(let id, _):
            return [.server(.peerLeft(PeerID(id)), seq: seq)]
        case .roleChanged(let id, let role, let by):
            return [.server(.roleChanged(PeerID(id), to: RoleName(role), by: optionalPeer(by)), seq: seq)]
        case .handRaised(let id, let at):
            return [.server(.handRaised(PeerID(id), at: at), seq: seq)]
        case .handLowered(let id, let by):
            return [.server(.handLowered(PeerID(id), by: optionalPeer(by)), seq: seq)]
        case .muteChanged(let id, let muted, let by):
            return [.server(.muteChanged(PeerID(id), muted: muted, by: optionalPeer(by)), seq: seq)]
        case .speakers(let levels):
            return [.server(.speakers(levels.map { SpeakerLevel(peer: PeerID($0.peer), level: $0.level) }), seq: seq)]
        case .chat(let message):
            return [.server(.chat(chat(for: message)), seq: seq)]
        case .invited(let id, let by):
            guard id == me else { return [] }
            return [.server(.invitedToSpeak(by: PeerID(by)), seq: seq)]
        case .inviteDeclined(let id, _):
            return [.notice(Notice(.info, "\(name(id)) declined your invitation to speak."))]
        case .askedToMute(let id, let by):
            guard id == me else { return [] }
            return [.server(.askedToMute(by: PeerID(by)), seq: seq)]
        case .removed(let id, let by, let reason):
            return [.server(.removed(PeerID(id), reason: reason, by: optionalPeer(by)), seq: seq)]
        case .roomEnded(_, let reason):
            return [.server(.roomEnded(reason: reason), seq: seq)]
        case .topicChanged(let topic, let by):
            return [.server(.topicChanged(topic, by: optionalPeer(by)), seq: seq)]
        case .error(let code, let text, _):
            return [.server(.error(code: code.rawValue, message: text), seq: 0)]
        }
    }

    private func chat(for message: WireChat) -> ChatMessage {
        let audience: ChatAudience
        switch message.to {
        case .everyone: audience = .everyone
        case .peer(let id): audience = .peer(PeerID(id))
        case .role(let role): audience = .role(RoleName(role))
        }
        return ChatMessage(
            from: PeerID(message.from), fromName: name(message.from), text: message.text, to: audience,
            sentAt: message.at)
    }

    static func peer(_ wire: WirePeer) -> Peer {
        Peer(
            id: PeerID(wire.id), name: wire.name, role: RoleName(wire.role), muted: wire.muted,
            handRaisedAt: wire.handRaisedAt, joinedAt: wire.joinedAt, level: wire.level)
    }

    /// The server's role table in RoomCore's form, checked by the same parser as `roles.json`; `nil` when the
    /// server sent none or one that does not check out (the built-in table is used then).
    static func roleTable(_ roles: [WireRole]) -> RoleTable? {
        guard !roles.isEmpty else { return nil }
        let object: [String: Any] = [
            "version": 1,
            "roles": roles.map {
                ["name": $0.name, "label": $0.label, "rank": $0.rank, "onStage": $0.onStage, "permissions": $0.permissions]
                    as [String: Any]
            },
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: object) else { return nil }
        return try? RoleTable.parse(data, source: "the server")
    }
}
