/// Turns a byte stream, in chunks of any size, into complete WebSocket messages (RFC 6455 section 5).
///
/// Feed bytes as they arrive, then call ``next()`` until it returns nil. Fragmented data messages come out
/// reassembled; control frames (ping, pong, close) come out as soon as they are complete, even between the
/// fragments of a data message. Text is checked as its bytes arrive, inside a frame and across fragments, so
/// bytes that cannot be valid UTF-8 fail at once rather than when the message is complete (RFC 6455 section
/// 8.1). The first broken rule throws a ``WebSocketProtocolError`` with the close code to
/// use, and every later call throws it again: a decoder that failed never yields another message.
public struct WebSocketDecoder: Sendable {
    /// Bytes of buffer kept between messages; more than the usual control message, far less than the largest.
    static let keptCapacity = 4096

    /// The default largest data message: 64 KiB.
    public static let defaultMaxMessageSize = 64 * 1024

    /// The side this decoder runs on: a server requires masked frames, a client requires unmasked ones.
    public let role: WebSocketRole
    /// The largest reassembled data message accepted; a bigger one fails with close 1009.
    public let maxMessageSize: Int

    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var fragments: [UInt8] = []
    private var fragmentOpcode: WebSocketOpcode?
    private var failure: WebSocketProtocolError?
    /// The UTF-8 check of the text message in progress.
    private var text = UTF8Validator()
    /// Payload bytes of the incomplete frame at `readIndex` already checked as text.
    private var checkedPayloadBytes = 0

    public init(role: WebSocketRole, maxMessageSize: Int = WebSocketDecoder.defaultMaxMessageSize) {
        self.role = role
        self.maxMessageSize = max(0, maxMessageSize)
    }

    /// Bytes buffered but not yet part of a complete frame.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Appends bytes read from the connection.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if readIndex > 0 && readIndex >= buffer.count / 2 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message, or nil when more bytes are needed.
    public mutating func next() throws(WebSocketProtocolError) -> WebSocketMessage? {
        if let failure { throw failure }
        do {
            while let frame = try nextFrame() {
                if let message = try assemble(frame) { return message }
            }
            return nil
        } catch {
            failure = error
            throw error
        }
    }

    private func fail(_ code: WebSocketCloseCode, _ problem: String) -> WebSocketProtocolError {
        WebSocketProtocolError(code, problem)
    }

    private mutating func nextFrame() throws(WebSocketProtocolError) -> WebSocketFrame? {
        let available = buffer.count - readIndex
        guard available >= 1 else { return nil }
        let first = buffer[readIndex]
        if first & 0x70 != 0 { throw fail(.protocolError, "reserved bits set") }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw fail(.protocolError, "unknown opcode \(first & 0x0F)")
        }
        let fin = first & 0x80 != 0
        if opcode.isControl && !fin { throw fail(.protocolError, "fragmented control frame") }
        if opcode == .continuation && fragmentOpcode == nil {
            throw fail(.protocolError, "continuation frame without a message to continue")
        }
        if (opcode == .text || opcode == .binary) && fragmentOpcode != nil {
            throw fail(.protocolError, "new data frame inside a fragmented message")
        }
        guard available >= 2 else { return nil }
        let second = buffer[readIndex + 1]
        let masked = second & 0x80 != 0
        switch role {
        case .server where !masked: throw fail(.protocolError, "client frame not masked")
        case .client where masked: throw fail(.protocolError, "server frame masked")
        default: break
        }
        let shortLength = Int(second & 0x7F)
        if opcode.isControl && shortLength > 125 { throw fail(.protocolError, "control frame longer than 125 bytes") }
        var headerLength = 2
        var length: UInt64
        switch shortLength {
        case 126:
            guard available >= 4 else { return nil }
            length = UInt64(buffer[readIndex + 2]) << 8 | UInt64(buffer[readIndex + 3])
            headerLength = 4
        case 127:
            guard available >= 10 else { return nil }
            length = 0
            for offset in 2..<10 { length = length << 8 | UInt64(buffer[readIndex + offset]) }
            if length >> 63 != 0 { throw fail(.protocolError, "64-bit length with the top bit set") }
            headerLength = 10
        default:
            length = UInt64(shortLength)
        }
        if !opcode.isControl && length > UInt64(maxMessageSize - fragments.count) {
            throw fail(.messageTooBig, "message larger than \(maxMessageSize) bytes")
        }
        let payloadLength = Int(length)
        let maskStart = readIndex + headerLength
        if masked { headerLength += 4 }
        let payloadStart = readIndex + headerLength
        let isText = opcode == .text || (opcode == .continuation && fragmentOpcode == .text)
        if isText {
            if opcode == .text && checkedPayloadBytes == 0 { text = UTF8Validator() }
            let arrived = min(payloadLength, available - headerLength)
            if arrived > checkedPayloadBytes {
                try checkText(payloadStart, checkedPayloadBytes..<arrived, maskStart: masked ? maskStart : nil)
                checkedPayloadBytes = arrived
            }
        }
        guard available >= headerLength + payloadLength else { return nil }
        checkedPayloadBytes = 0
        if isText && fin && !text.isAtCharacterBoundary {
            throw fail(.invalidPayload, "text message is not valid UTF-8")
        }
        var payload = Array(buffer[payloadStart..<payloadStart + payloadLength])
        if masked {
            let key = (buffer[maskStart], buffer[maskStart + 1], buffer[maskStart + 2], buffer[maskStart + 3])
            payload.withUnsafeMutableBufferPointer { bytes in
                for index in bytes.indices {
                    switch index & 3 {
                    case 0: bytes[index] ^= key.0
                    case 1: bytes[index] ^= key.1
                    case 2: bytes[index] ^= key.2
                    default: bytes[index] ^= key.3
                    }
                }
            }
        }
        readIndex += headerLength + payloadLength
        if readIndex == buffer.count {
            // Room for a usual message is kept; a big one's is given back, so an idle connection stays small.
            buffer.removeAll(keepingCapacity: buffer.capacity <= Self.keptCapacity)
            readIndex = 0
        }
        return WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
    }

    /// Checks payload bytes `range` of the frame whose payload starts at `start` as the text message's next bytes.
    private mutating func checkText(
        _ start: Int, _ range: Range<Int>, maskStart: Int?
    ) throws(WebSocketProtocolError) {
        var validator = text
        let valid = buffer.withUnsafeBufferPointer { bytes in
            guard let maskStart else {
                return validator.take(
                    UnsafeBufferPointer(rebasing: bytes[start + range.lowerBound..<start + range.upperBound]))
            }
            for index in range {
                guard validator.take(bytes[start + index] ^ bytes[maskStart + (index & 3)]) else { return false }
            }
            return true
        }
        text = validator
        if !valid { throw fail(.invalidPayload, "text message is not valid UTF-8") }
    }

    private mutating func assemble(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> WebSocketMessage? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return try Self.parseClose(frame.payload)
        case .text, .binary:
            if frame.fin { return Self.message(frame.opcode, frame.payload) }
            fragmentOpcode = frame.opcode
            fragments = frame.payload
            return nil
        case .continuation:
            fragments.append(contentsOf: frame.payload)
            guard frame.fin, let opcode = fragmentOpcode else { return nil }
            let payload = fragments
            fragments = []
            fragmentOpcode = nil
            return Self.message(opcode, payload)
        }
    }

    private static func message(_ opcode: WebSocketOpcode, _ payload: [UInt8]) -> WebSocketMessage {
        guard opcode == .text else { return .binary(payload) }
        // Checked as it arrived (see `checkText`), so decoding repairs nothing.
        return .text(String(decoding: payload, as: UTF8.self))
    }

    /// Parses a close frame's payload: empty, or a valid code followed by a UTF-8 reason.
    public static func parseClose(_ payload: [UInt8]) throws(WebSocketProtocolError) -> WebSocketMessage {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        if payload.count == 1 { throw WebSocketProtocolError(.protocolError, "close frame with a 1-byte payload") }
        let code = WebSocketCloseCode(UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isSendable else {
            throw WebSocketProtocolError(.protocolError, "invalid close code \(code.rawValue)")
        }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else {
            throw WebSocketProtocolError(.invalidPayload, "close reason is not valid UTF-8")
        }
        return .close(code: code, reason: reason)
    }
}
