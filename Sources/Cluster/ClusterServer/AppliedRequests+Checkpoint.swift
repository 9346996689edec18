import RoomCore
import RoomProtocol
import RoomServer

/// A room's decided request ids as its checkpoint keeps them.
extension AppliedRequests {
    /// The decisions as a checkpoint keeps them, identities sorted: each id as `s:` and the text of a string id or
    /// `i:` and the digits of an integer one, and the refusals by that text.
    var stored: [RoomCheckpoint.Applied] {
        decisions.sorted { $0.key < $1.key }.map { peer, decisions in
            let refused = decisions.compactMap { decision -> RoomCheckpoint.Refused? in
                guard case .error(let code, let message, _)? = decision.refusal?.event else { return nil }
                return RoomCheckpoint.Refused(id: Self.text(decision.id), code: code.rawValue, message: message)
            }
            return RoomCheckpoint.Applied(
                peer: peer, ids: decisions.map { Self.text($0.id) }, refused: refused.isEmpty ? nil : refused)
        }
    }

    init(stored: [RoomCheckpoint.Applied]) {
        self.init()
        for entry in stored {
            let refusals = Dictionary(
                (entry.refused ?? []).map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
            decisions[entry.peer] = entry.ids.compactMap { text -> Decision? in
                guard let id = Self.id(text) else { return nil }
                let refusal = refusals[text].map {
                    ServerMessage(.error(code: ErrorCode(rawValue: $0.code), message: $0.message, id: id), seq: nil)
                }
                return Decision(id: id, refusal: refusal)
            }
        }
    }

    static func text(_ id: RequestID) -> String {
        switch id {
        case .string(let text): "s:\(text)"
        case .integer(let number): "i:\(number)"
        }
    }

    static func id(_ text: String) -> RequestID? {
        if text.hasPrefix("s:") { return .string(String(text.dropFirst(2))) }
        if text.hasPrefix("i:") { return Int64(text.dropFirst(2)).map { .integer($0) } }
        return nil
    }
}
