/// The opcode of a WebSocket frame (RFC 6455 section 5.2).
public enum WebSocketOpcode: UInt8, Sendable, Equatable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Control frames (close, ping, pong) carry at most 125 bytes and are never fragmented.
    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// Which end of the connection this side is: it decides who masks (clients) and who must not (servers).
public enum WebSocketRole: Sendable, Equatable {
    case server
    case client
}

/// A close status code (RFC 6455 section 7.4).
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection is fulfilled.
    public static let normal = WebSocketCloseCode(1000)
    /// 1001: the endpoint is going away (server shutdown, idle timeout, client leaving).
    public static let goingAway = WebSocketCloseCode(1001)
    /// 1002: the peer broke the framing rules.
    public static let protocolError = WebSocketCloseCode(1002)
    /// 1003: a kind of data this endpoint does not accept.
    public static let unsupportedData = WebSocketCloseCode(1003)
    /// 1005: reported locally when a close frame had no status code; never sent.
    public static let noStatusReceived = WebSocketCloseCode(1005)
    /// 1006: reported locally when the connection ended without a close frame; never sent.
    public static let abnormalClosure = WebSocketCloseCode(1006)
    /// 1007: a text message was not valid UTF-8.
    public static let invalidPayload = WebSocketCloseCode(1007)
    /// 1008: the message broke this endpoint's policy (authentication, rate limit).
    public static let policyViolation = WebSocketCloseCode(1008)
    /// 1009: a message was larger than this endpoint accepts.
    public static let messageTooBig = WebSocketCloseCode(1009)
    /// 1011: the server met an unexpected condition.
    public static let internalError = WebSocketCloseCode(1011)

    /// Whether the code may appear in a close frame on the wire.
    public var isSendable: Bool {
        switch rawValue {
        case 1000...1003, 1007...1011, 3000...4999: return true
        default: return false
        }
    }

    public var description: String { String(rawValue) }
}

/// One WebSocket frame, with its payload already unmasked.
public struct WebSocketFrame: Sendable, Equatable {
    public var fin: Bool
    public var opcode: WebSocketOpcode
    public var payload: [UInt8]

    public init(fin: Bool = true, opcode: WebSocketOpcode, payload: [UInt8]) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// The frame on the wire. Clients pass a fresh 4-byte `maskingKey` per frame; servers pass nil.
    public func encoded(maskingKey: [UInt8]? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 14)
        out.append((fin ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        let length = payload.count
        if length < 126 {
            out.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            out.append(maskBit | 126)
            out.append(UInt8(length >> 8))
            out.append(UInt8(length & 0xFF))
        } else {
            out.append(maskBit | 127)
            let wide = UInt64(length)
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8((wide >> UInt64(shift)) & 0xFF))
            }
        }
        if let key = maskingKey {
            precondition(key.count == 4, "a WebSocket masking key has 4 bytes")
            out.append(contentsOf: key)
            for (index, byte) in payload.enumerated() {
                out.append(byte ^ key[index & 3])
            }
        } else {
            out.append(contentsOf: payload)
        }
        return out
    }

    /// A close frame's payload: the code in network order, then the UTF-8 reason cut to fit in 125 bytes.
    public static func closePayload(code: WebSocketCloseCode, reason: String) -> [UInt8] {
        var payload: [UInt8] = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        var reasonBytes = Array(reason.utf8)
        if reasonBytes.count > 123 {
            reasonBytes = Array(reasonBytes.prefix(123))
            // Cut on a scalar boundary so the reason stays valid UTF-8.
            while let last = reasonBytes.last, last & 0xC0 == 0x80 { reasonBytes.removeLast() }
            if let last = reasonBytes.last, last >= 0xC0 { reasonBytes.removeLast() }
        }
        payload.append(contentsOf: reasonBytes)
        return payload
    }
}

/// A complete message delivered by ``WebSocketDecoder``: data messages reassembled, control frames as they come.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// A close frame; `code` is nil when the frame carried no status code (reported as 1005).
    case close(code: WebSocketCloseCode?, reason: String)
}

/// A broken rule in the peer's frames, with the close code the connection must be closed with.
public struct WebSocketProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The code to send in the close frame.
    public var closeCode: WebSocketCloseCode
    /// What was wrong, short enough to send as the close reason.
    public var problem: String

    public init(_ closeCode: WebSocketCloseCode, _ problem: String) {
        self.closeCode = closeCode
        self.problem = problem
    }

    public var description: String { "websocket: \(problem) (close \(closeCode.rawValue))" }
}

extension WebSocketMessage {
    /// The message as one frame on the wire; clients pass a fresh 4-byte `maskingKey`, servers pass nil.
    /// A close message with no code is sent with an empty payload.
    public func encoded(maskingKey: [UInt8]? = nil) -> [UInt8] {
        let frame: WebSocketFrame
        switch self {
        case .text(let text): frame = WebSocketFrame(opcode: .text, payload: Array(text.utf8))
        case .binary(let bytes): frame = WebSocketFrame(opcode: .binary, payload: bytes)
        case .ping(let bytes): frame = WebSocketFrame(opcode: .ping, payload: Array(bytes.prefix(125)))
        case .pong(let bytes): frame = WebSocketFrame(opcode: .pong, payload: Array(bytes.prefix(125)))
        case .close(let code, let reason):
            let payload = code.map { WebSocketFrame.closePayload(code: $0, reason: reason) } ?? []
            frame = WebSocketFrame(opcode: .close, payload: payload)
        }
        return frame.encoded(maskingKey: maskingKey)
    }
}
