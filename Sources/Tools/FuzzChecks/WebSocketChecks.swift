import WebSocket

/// The WebSocket decoder and the HTTP upgrade, as both the server and the client read them.
enum WebSocketChecks {
    /// The largest messages the decoder is tried with: none, tiny, a control frame's, the 16-bit length's edge,
    /// and the server's real limit.
    static let messageLimits = [0, 1, 125, 126, 1024, 64 * 1024]

    /// What a decoder made of a stream: the messages in order, then the error that stopped it.
    struct Outcome: Equatable {
        var messages: [WebSocketMessage] = []
        var error: WebSocketProtocolError?
    }

    static func decode(_ chunks: [ArraySlice<UInt8>], role: WebSocketRole, limit: Int) throws(FuzzFailure) -> Outcome {
        var decoder = WebSocketDecoder(role: role, maxMessageSize: limit)
        var outcome = Outcome()
        for chunk in chunks {
            decoder.feed(chunk)
            do {
                while let message = try decoder.next() { outcome.messages.append(message) }
            } catch {
                outcome.error = error
                // A decoder that failed keeps failing with the same error, whatever comes next.
                decoder.feed([0x81, 0x00])
                var again: WebSocketProtocolError?
                do {
                    _ = try decoder.next()
                } catch let failure {
                    again = failure
                }
                try expect(
                    again == error, "a failed decoder changed its error from \(error) to \(String(describing: again))")
                return outcome
            }
        }
        return outcome
    }

    /// Input: a byte choosing the side and the message limit, two bytes choosing where to split, then the stream.
    static func decoder(_ input: [UInt8]) throws(FuzzFailure) {
        var choices = Choices(input)
        let flags = choices.byte()
        let role: WebSocketRole = flags & 1 == 0 ? .server : .client
        let limit = messageLimits[Int(flags >> 1) % messageLimits.count]
        let split = Int(choices.uint16())
        let stream = choices.rest

        let whole = try decode([stream[...]], role: role, limit: limit)
        let cut = split % (stream.count + 1)
        let halves = try decode([stream[..<cut], stream[cut...]], role: role, limit: limit)
        try expect(halves == whole, "split at \(cut): \(halves) but whole: \(whole)")
        if stream.count <= 4096 {
            let single = try decode(stream.indices.map { stream[$0...$0] }, role: role, limit: limit)
            try expect(single == whole, "byte by byte: \(single) but whole: \(whole)")
        }
        // A truncated stream yields a prefix of the messages and no error but the whole stream's.
        let prefix = try decode([stream[..<cut]], role: role, limit: limit)
        try expect(
            whole.messages.starts(with: prefix.messages) && (prefix.error == nil || prefix.error == whole.error),
            "truncated to \(cut): \(prefix) but whole: \(whole)")

        for message in whole.messages {
            switch message {
            case .text(let text):
                try expect(text.utf8.count <= limit, "a text message of \(text.utf8.count) bytes over \(limit)")
            case .binary(let bytes):
                try expect(bytes.count <= limit, "a binary message of \(bytes.count) bytes over \(limit)")
            case .ping(let bytes), .pong(let bytes):
                try expect(bytes.count <= 125, "a control frame of \(bytes.count) bytes")
            case .close(let code, let reason):
                try expect(code.map(\.isSendable) ?? true, "close code \(String(describing: code)) is not sendable")
                try expect(reason.utf8.count <= 123, "a close reason of \(reason.utf8.count) bytes")
            }
        }
        if let error = whole.error {
            try expect(error.closeCode.isSendable, "the decoder asks to close with \(error.closeCode)")
            try expect(!error.problem.isEmpty && error.problem.utf8.count <= 123, "problem \"\(error.problem)\"")
        }

        // What was decoded, sent again by the other side, decodes to the same messages.
        let key: [UInt8]? = role == .server ? [choices.byte(), 0x5A, flags, UInt8(truncatingIfNeeded: cut)] : nil
        var again: [UInt8] = []
        for message in whole.messages { again += message.encoded(maskingKey: key) }
        let reencoded = try decode([again[...]], role: role, limit: limit)
        try expect(
            reencoded == Outcome(messages: whole.messages), "re-encoded \(whole.messages) decoded as \(reencoded)")
    }

    /// Input: a byte choosing the head size limit, then bytes read as a request head, a response head, a
    /// `ws://` URL and base64 text.
    static func handshake(_ input: [UInt8]) throws(FuzzFailure) {
        var choices = Choices(input)
        let maxHead = choices.pick([16, 64, 256, WebSocketHandshake.defaultMaxHeadSize])
        let data = choices.rest

        // headLength refuses with 400 at once what cannot start an HTTP message (its first byte is not a capital
        // letter); else it finds the first blank line within the limit, or says it needs more, or refuses with 431.
        let startsAsHTTP = data.first.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) } ?? true
        let expectedEnd: Int? = {
            guard startsAsHTTP else { return nil }
            let limit = min(data.count, maxHead)
            var index = 3
            while index < limit {
                if data[index - 3] == 13 && data[index - 2] == 10 && data[index - 1] == 13 && data[index] == 10 {
                    return index + 1
                }
                index += 1
            }
            return nil
        }()
        switch Result(catching: { () throws(WebSocketHandshakeError) in
            try WebSocketHandshake.headLength(in: data, maxHeadSize: maxHead)
        }) {
        case .success(let length):
            try expect(
                length == expectedEnd,
                "head length \(String(describing: length)), not \(String(describing: expectedEnd))")
            if length == nil { try expect(data.count < maxHead, "no head in \(data.count) bytes and no 431") }
        case .failure(let error) where !startsAsHTTP:
            try expect(error.status == 400, "headLength refused a non-HTTP start with \(error.status): \(error)")
        case .failure(let error):
            try expect(
                error.status == 431 && expectedEnd == nil && data.count >= maxHead,
                "headLength refused \(data.count) bytes: \(error)")
        }

        // Only a complete head reaches the parsers, as on a connection.
        if let end = expectedEnd {
            try checkRequest(Array(data[..<end]))
            try checkResponse(Array(data[..<end]))
        } else {
            try checkRequest(data)
            try checkResponse(data)
        }
        // URLs and keys are short: the rest is the parsers' business, not these checks'.
        guard data.count <= 1024 else { return }
        if let text = String(validating: data, as: UTF8.self) {
            try checkURL(text)
            if let bytes = Base64.decode(text) {
                try expect(Base64.encode(bytes) == text, "base64 \"\(text)\" is not canonical but decodes")
            }
        }
        let encoded = Base64.encode(data)
        try expect(Base64.decode(encoded) == data, "base64 of \(data.count) bytes does not decode back")
    }

    static let requestStatuses: Set<Int> = [400, 405, 426, 505]

    static func checkRequest(_ head: [UInt8]) throws(FuzzFailure) {
        let request: WebSocketUpgradeRequest
        do {
            request = try WebSocketUpgradeRequest.parse(head: head)
        } catch {
            try expect(requestStatuses.contains(error.status), "request refused with status \(error.status)")
            try expect(!error.problem.isEmpty, "a refusal without a problem")
            return
        }
        try expect(Base64.decode(request.key)?.count == 16, "accepted key \(request.key)")
        try expect(request.path.hasPrefix("/"), "accepted path \(request.path)")
        // The same request written again by our client's code parses to the same request.
        let handshakeNames: Set<String> = [
            "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version",
        ]
        var others = HTTPHeaders()
        for field in request.headers where !handshakeNames.contains(field.name.lowercased()) {
            others.add(field.name, field.value)
        }
        let rebuilt = WebSocketHandshake.requestBytes(
            host: request.headers["Host"] ?? "", target: request.target, key: request.key, headers: others)
        let again: WebSocketUpgradeRequest
        do {
            again = try WebSocketUpgradeRequest.parse(head: rebuilt)
        } catch {
            throw FuzzFailure("a rebuilt request was refused: \(error)")
        }
        try expect(
            again.target == request.target && again.path == request.path && again.key == request.key
                && again.room == request.room && again.bearerToken == request.bearerToken
                && again.query.elementsEqual(request.query) { $0.name == $1.name && $0.value == $1.value },
            "the rebuilt request differs: \(again) from \(request)")
    }

    static func checkResponse(_ head: [UInt8]) throws(FuzzFailure) {
        let response: WebSocketUpgradeResponse
        do {
            response = try WebSocketUpgradeResponse.parse(head: head)
        } catch {
            try expect(error.status == 0 || error.status == 400, "response refused with status \(error.status)")
            return
        }
        try expect((100...599).contains(response.status), "a status of \(response.status)")
        let statusText = head.dropFirst(9).prefix(3)
        try expect(
            Array(statusText) == Array(String(response.status).utf8),
            "status \(response.status) read from \(statusText)")
        switch Result(catching: { () throws(WebSocketHandshakeError) in
            try response.validate(expectedAccept: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        }) {
        case .success: try expect(response.status == 101, "a \(response.status) response validated")
        case .failure(let error): try expect(!error.problem.isEmpty, "a validation error without a problem")
        }
    }

    static func checkURL(_ text: String) throws(FuzzFailure) {
        let url: WebSocketURL
        do {
            url = try WebSocketURL(text)
        } catch {
            return
        }
        try expect(!url.host.isEmpty && (1...65535).contains(url.port), "accepted \(url) from \(text)")
        try expect(url.target.hasPrefix("/"), "target \(url.target)")
        let rebuilt = (url.secure ? "wss://" : "ws://") + url.hostHeader + url.target
        do {
            let again = try WebSocketURL(rebuilt)
            try expect(again == url, "\(rebuilt) parses to \(again), not \(url)")
        } catch {
            throw FuzzFailure("the rebuilt URL \(rebuilt) (from \(text)) was refused: \(error)")
        }
    }

    // MARK: Seeds

    static func seed(flags: UInt8, split: UInt16 = 3, _ frames: [UInt8]...) -> [UInt8] {
        [flags, UInt8(split >> 8), UInt8(split & 0xFF)] + frames.joined()
    }

    static let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

    static func decoderSeeds() -> [[UInt8]] {
        let limit64K: UInt8 = 5 << 1
        let hello = Array("Hello".utf8)
        func masked(_ fin: Bool, _ opcode: WebSocketOpcode, _ payload: [UInt8]) -> [UInt8] {
            WebSocketFrame(fin: fin, opcode: opcode, payload: payload).encoded(maskingKey: mask)
        }
        func plain(_ fin: Bool, _ opcode: WebSocketOpcode, _ payload: [UInt8]) -> [UInt8] {
            WebSocketFrame(fin: fin, opcode: opcode, payload: payload).encoded()
        }
        return [
            // RFC 6455 section 5.7's examples, as a client and as a server reads them.
            seed(flags: limit64K | 1, [0x81, 0x05] + hello),
            seed(flags: limit64K, [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]),
            seed(flags: limit64K | 1, [0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F]),
            seed(flags: limit64K | 1, [0x89, 0x05] + hello),
            seed(
                flags: limit64K, masked(false, .text, [0x61]), masked(true, .ping, [1]),
                masked(true, .continuation, [0x62])),
            seed(flags: limit64K, masked(true, .binary, [UInt8](repeating: 7, count: 300))),
            seed(flags: limit64K, masked(true, .close, WebSocketFrame.closePayload(code: .normal, reason: "left"))),
            seed(flags: limit64K, masked(true, .close, [0x03, 0xE8, 0xFF])),
            seed(flags: limit64K, masked(true, .text, [0xED, 0xA0, 0x80])),
            seed(flags: limit64K, masked(false, .text, [0xE2, 0x82]), masked(true, .continuation, [0xAC])),
            seed(flags: 4 << 1, [0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0]),
            seed(flags: limit64K | 1, plain(true, .pong, []), plain(true, .text, Array(#"{"type":"joined"}"#.utf8))),
            seed(flags: limit64K, [0xC1, 0x80] + mask),
            seed(flags: limit64K, [0x89, 0xFE, 0, 126] + mask + [UInt8](repeating: 0, count: 126)),
        ]
    }

    static func handshakeSeeds() -> [[UInt8]] {
        let request =
            "GET /rooms/caf%C3%A9?token=abc%2Bdef&x=1 HTTP/1.1\r\nHost: example.com\r\nupgrade: WebSocket\r\n"
            + "Connection: keep-alive, Upgrade\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            + "Sec-WebSocket-Version: 13\r\nAuthorization:   Bearer header.token  \r\n\r\n"
        let response =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
        let full = UInt8(3)
        return [
            [full] + Array(request.utf8),
            [full] + Array(response.utf8),
            [full] + WebSocketHandshake.rejectResponseBytes(status: 426, reason: "use version 13"),
            [full]
                + WebSocketHandshake.requestBytes(
                    host: "[::1]:7480", target: "/rooms/lobby?token=a+b%20c", key: "dGhlIHNhbXBsZSBub25jZQ=="),
            [full] + Array("ws://127.0.0.1:7480/rooms/lobby?token=x".utf8),
            [full] + Array("wss://[::1]/rooms/a".utf8),
            [full] + Array("dGhlIHNhbXBsZSBub25jZQ==".utf8),
            [1] + Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8),
        ]
    }
}
