import Foundation
import RoomCore
import RoomProtocol
import StrictJSON

/// Translates between the wire and RoomCore's store: session events become `RoomAction`s for `reduce`, and the
/// store's `send` effects become wire requests. The UI's runtime and anything else holding a `RoomState` use it.
public enum StoreFeed {
    /// The actions for one session event, in order. `selfID` is this client's identity once known (from the
    /// last `joined`); invitations addressed to others are not actions for this client's store.
    public static func actions(for event: SessionEvent, selfID: PeerID?) -> [RoomAction] {
        switch event {
        case .message(let message):
            return actions(for: message, selfID: selfID)
        case .reconnected(let message):
            return [.server(.reconnected, seq: 0)] + actions(for: message, selfID: selfID)
        case .reconnecting(let attempt, _):
            return [.server(.reconnecting(attempt: attempt), seq: 0)]
        case .ended:
            return []
        }
    }

    /// The actions for one server message: none when the store has no use for it, one per peer for a
    /// `peers_joined` (each with its own sequence number).
    public static func actions(for message: ServerMessage, selfID: PeerID?) -> [RoomAction] {
        if case .peersJoined(let peers) = message.event {
            let last = max(0, message.seq ?? 0)
            let first = last - Int64(peers.count) + 1
            return peers.enumerated().map { index, wire in
                .server(.peerJoined(peer(wire)), seq: UInt64(max(0, first + Int64(index))))
            }
        }
        return action(for: message, selfID: selfID).map { [$0] } ?? []
    }

    /// The action for one server message, or nil when the store has no use for it.
    public static func action(for message: ServerMessage, selfID: PeerID?) -> RoomAction? {
        let seq = UInt64(max(0, message.seq ?? 0))
        let event: ServerEvent
        switch message.event {
        case .joined(let snapshot):
            let me = snapshot.peers.first { $0.id == snapshot.selfID }
            event = .joined(
                RoomSnapshot(
                    roomID: snapshot.room, topic: snapshot.topic, selfID: PeerID(snapshot.selfID),
                    peers: snapshot.peers.map(peer), recentChat: snapshot.chat.map(chat), ended: false, seq: seq,
                    invitedBy: me?.invitedBy.flatMap(actor)))
        case .peerJoined(let wire): event = .peerJoined(peer(wire))
        case .peersJoined: return nil
        case .peerLeft(let id, _): event = .peerLeft(PeerID(id))
        case .roleChanged(let id, let role, let by):
            event = .roleChanged(PeerID(id), to: RoleName(role), by: actor(by))
        case .handRaised(let id, let at): event = .handRaised(PeerID(id), at: at)
        case .handLowered(let id, let by): event = .handLowered(PeerID(id), by: actor(by))
        case .muteChanged(let id, let muted, let by): event = .muteChanged(PeerID(id), muted: muted, by: actor(by))
        case .speakers(let levels):
            event = .speakers(levels.map { SpeakerLevel(peer: PeerID($0.peer), level: $0.level) })
        case .chat(let wire): event = .chat(chat(wire))
        case .invited(let id, let by):
            guard PeerID(id) == selfID else { return nil }
            event = .invitedToSpeak(by: PeerID(by))
        case .inviteDeclined: return nil
        case .askedToMute(_, let by): event = .askedToMute(by: PeerID(by))
        case .removed(let id, let by, let reason): event = .removed(PeerID(id), reason: reason, by: actor(by))
        case .roomEnded(_, let reason): event = .roomEnded(reason: reason)
        case .topicChanged(let topic, let by): event = .topicChanged(topic, by: actor(by))
        case .error(let code, let text, _): event = .error(code: code.rawValue, message: text)
        }
        return .server(event, seq: seq)
    }

    /// The wire form of a request the store asks to send.
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

    /// The server's role table as its `joined` snapshot describes it, checked by the same rules as a
    /// `roles.json` file, so a client shows and checks exactly what the server enforces.
    public static func roleTable(from roles: [WireRole]) throws(RoleTableError) -> RoleTable {
        let definitions = roles.map { role -> JSONValue in
            .object(
                JSONObject([
                    ("name", .string(role.name)), ("label", .string(role.label)), ("rank", .integer(Int64(role.rank))),
                    ("onStage", .bool(role.onStage)), ("permissions", .array(role.permissions.map { .string($0) })),
                ]))
        }
        let document = JSONValue.object(JSONObject([("version", .integer(1)), ("roles", .array(definitions))]))
        return try RoleTable.parse(Data(document.encoded), source: "the server's joined snapshot")
    }

    /// The peer who made a change, or nil when the server made it itself (the wire's `by` is then empty).
    static func actor(_ by: String) -> PeerID? {
        by.isEmpty ? nil : PeerID(by)
    }

    static func peer(_ wire: WirePeer) -> Peer {
        Peer(
            id: PeerID(wire.id), name: wire.name, role: RoleName(wire.role), muted: wire.muted,
            handRaisedAt: wire.handRaisedAt, joinedAt: wire.joinedAt, level: wire.level)
    }

    static func chat(_ wire: WireChat) -> ChatMessage {
        let audience: ChatAudience =
            switch wire.to {
            case .everyone: .everyone
            case .peer(let id): .peer(PeerID(id))
            case .role(let role): .role(RoleName(role))
            }
        return ChatMessage(from: PeerID(wire.from), fromName: wire.name, text: wire.text, to: audience, sentAt: wire.at)
    }
}
