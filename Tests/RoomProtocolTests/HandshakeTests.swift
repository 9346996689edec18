import RoomProtocol
import Testing
import WebSocket

let sampleRequest =
    "GET /rooms/caf%C3%A9?token=abc%2Bdef&x=1 HTTP/1.1\r\nHost: example.com\r\nupgrade: WebSocket\r\n"
    + "Connection: keep-alive, Upgrade\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    + "Sec-WebSocket-Version: 13\r\nAuthorization:   Bearer header.token  \r\n\r\n"

/// Parses a head the way a connection does: through `headLength`, fed in the given chunks.
func parseRequest(_ chunks: [ArraySlice<UInt8>]) throws(WebSocketHandshakeError) -> WebSocketUpgradeRequest? {
    var buffer: [UInt8] = []
    for chunk in chunks {
        buffer += chunk
        if let length = try WebSocketHandshake.headLength(in: buffer) {
            return try WebSocketUpgradeRequest.parse(head: Array(buffer[..<length]))
        }
    }
    return nil
}

func request(replacing old: String, with new: String) -> [UInt8] {
    Array(sampleRequest.replacingOccurrences(of: old, with: new).utf8)
}

extension String {
    func replacingOccurrences(of old: String, with new: String) -> String {
        guard let range = range(of: old) else { return self }
        return self[..<range.lowerBound] + new + self[range.upperBound...]
    }

    func range(of needle: String) -> Range<String.Index>? {
        var index = startIndex
        while index < endIndex {
            if self[index...].hasPrefix(needle) { return index..<self.index(index, offsetBy: needle.count) }
            index = self.index(after: index)
        }
        return nil
    }
}

@Suite struct HandshakeTests {
    @Test func parsesARequestWholeSplitAndTruncated() throws {
        let bytes = Array(sampleRequest.utf8)
        let whole = try #require(try parseRequest([bytes[...]]))
        #expect(whole.path == "/rooms/café")
        #expect(whole.room == "café")
        #expect(whole.target == "/rooms/caf%C3%A9?token=abc%2Bdef&x=1")
        #expect(whole.queryValue("token") == "abc+def")
        #expect(whole.queryValue("x") == "1")
        #expect(whole.key == "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(whole.headers["HOST"] == "example.com")
        #expect(whole.bearerToken == "header.token")
        for split in 0...bytes.count {
            #expect(try parseRequest([bytes[..<split], bytes[split...]]) == whole, "split at \(split)")
        }
        #expect(try parseRequest(bytes.indices.map { bytes[$0...$0] }) == whole)
        for length in 0..<bytes.count {
            #expect(try parseRequest([bytes[..<length]]) == nil, "truncated to \(length)")
        }
    }

    @Test func tokenFromTheQueryWithoutAuthorization() throws {
        let parsed = try #require(
            try parseRequest([request(replacing: "Authorization:   Bearer header.token  \r\n", with: "")[...]]))
        #expect(parsed.bearerToken == "abc+def")
        let basic = try #require(try parseRequest([request(replacing: "Bearer header.token", with: "Basic xyz")[...]]))
        #expect(basic.bearerToken == "abc+def")
    }

    @Test func roomOnlyForRoomPaths() throws {
        for (path, room) in [
            ("/rooms/a", "a"), ("/rooms/", nil), ("/rooms/a/b", nil), ("/other/a", nil), ("/rooms", nil),
        ] {
            let parsed = try #require(try parseRequest([request(replacing: "/rooms/caf%C3%A9", with: path)[...]]))
            #expect(parsed.room == room, "\(path)")
        }
    }

    @Test(arguments: [
        ("GET ", "POST ", 405),
        ("HTTP/1.1\r\nHost", "HTTP/1.0\r\nHost", 505),
        ("Host: example.com\r\n", "", 400),
        ("upgrade: WebSocket\r\n", "", 400),
        ("keep-alive, Upgrade", "keep-alive", 400),
        ("Sec-WebSocket-Version: 13", "Sec-WebSocket-Version: 8", 426),
        ("dGhlIHNhbXBsZSBub25jZQ==", "dGhlIHNhbXBsZQ==", 400),
        ("dGhlIHNhbXBsZSBub25jZQ==", "not base64 at all!!", 400),
        ("x=1", "x=%zz", 400),
        ("caf%C3%A9", "caf%C3", 400),
        ("Host: example.com\r\n", "Host: example.com\r\n folded\r\n", 400),
        ("Host: example.com\r\n", "Bad Name: x\r\nHost: example.com\r\n", 400),
        ("Host: example.com\r\n", "NoColon\r\nHost: example.com\r\n", 400),
        ("/rooms/", "rooms/", 400),
    ])
    func rejectsBadRequests(old: String, new: String, status: Int) {
        let bytes = request(replacing: old, with: new)
        #expect(bytes != Array(sampleRequest.utf8))
        do {
            _ = try parseRequest([bytes[...]])
            Issue.record("accepted \(new)")
        } catch {
            #expect(error.status == status, "\(error)")
        }
    }

    @Test func headSizeIsBounded() throws {
        let bytes = Array("GET ".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 96)
        #expect(throws: WebSocketHandshakeError(status: 431, "header larger than 100 bytes")) {
            try WebSocketHandshake.headLength(in: bytes, maxHeadSize: 100)
        }
        #expect(try WebSocketHandshake.headLength(in: Array(bytes.prefix(99)), maxHeadSize: 100) == nil)
        let head = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        #expect(try WebSocketHandshake.headLength(in: head + [1, 2], maxHeadSize: head.count) == head.count)
    }

    /// A TLS handshake (or anything else that cannot start an HTTP message) is answered at once, not after the
    /// handshake timeout, so a `wss://` client of a plain server learns why in a moment.
    @Test func aTLSHandshakeToAPlainServerIsRefusedAtOnce() throws {
        #expect(
            throws: WebSocketHandshakeError(
                status: 400, "a TLS handshake arrived, but this address speaks plain HTTP: use ws://, not wss://")
        ) {
            try WebSocketHandshake.headLength(in: [0x16, 0x03, 0x01])
        }
        #expect(throws: WebSocketHandshakeError(status: 400, "not an HTTP message")) {
            try WebSocketHandshake.headLength(in: [0x00])
        }
        #expect(try WebSocketHandshake.headLength(in: Array("GE".utf8)) == nil)
    }

    @Test func acceptKeyHashesKeyAndGUID() {
        var seenInput: [UInt8] = []
        let accept = WebSocketHandshake.acceptKey(forKey: "abc") { input in
            seenInput = input
            return [0xFF, 0x00, 0x10]
        }
        #expect(seenInput == Array("abc258EAFA5-E914-47DA-95CA-C5AB0DC85B11".utf8))
        #expect(accept == "/wAQ")
    }

    @Test func responseValidation() throws {
        let good = try WebSocketUpgradeResponse.parse(
            head: Array(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: abc=\r\n\r\n"
                    .utf8))
        try good.validate(expectedAccept: "abc=")
        #expect(throws: WebSocketHandshakeError(status: 0, "Sec-WebSocket-Accept does not match the key")) {
            try good.validate(expectedAccept: "xyz=")
        }
        let rejection = WebSocketHandshake.rejectResponseBytes(status: 403, reason: "bad token")
        let length = try #require(try WebSocketHandshake.headLength(in: rejection))
        #expect(String(decoding: rejection[length...], as: UTF8.self) == "bad token\n")
        let refused = try WebSocketUpgradeResponse.parse(head: Array(rejection[..<length]))
        #expect(refused.status == 403)
        #expect(throws: WebSocketHandshakeError(status: 403, "server refused the upgrade: 403 Forbidden")) {
            try refused.validate(expectedAccept: "abc=")
        }
        #expect(throws: WebSocketHandshakeError(status: 0, "malformed status line")) {
            try WebSocketUpgradeResponse.parse(head: Array("HTTP/1.1 1O1 Oops\r\n\r\n".utf8))
        }
    }

    @Test func builtRequestParsesBack() throws {
        var headers = HTTPHeaders()
        headers.add("Authorization", "Bearer t")
        let bytes = WebSocketHandshake.requestBytes(
            host: "h:1", target: "/rooms/r?token=q", key: "dGhlIHNhbXBsZSBub25jZQ==", headers: headers)
        let parsed = try #require(try parseRequest([bytes[...]]))
        #expect(parsed.room == "r")
        #expect(parsed.bearerToken == "t")
        #expect(parsed.headers["host"] == "h:1")
    }

    @Test func base64() {
        for bytes: [UInt8] in [[], [1], [1, 2], [1, 2, 3], [255, 254, 253, 0]] {
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
        #expect(Base64.encode(Array("the sample nonce".utf8)) == "dGhlIHNhbXBsZSBub25jZQ==")
        for bad in ["a", "ab=c", "a===", "ab c", "abc=abcd", "YW\u{E9}", "YWJj====", "=YWJ"] {
            #expect(Base64.decode(bad) == nil, "\(bad)")
        }
        let every = (0...255).map { UInt8($0) }
        #expect(Base64.decode(Base64.encode(every)) == every)
    }

    /// Found by the websocket-handshake fuzz target: unused bits before the padding were ignored, so several
    /// texts decoded to the same bytes (a key "dGhlIHNhbXBsBH==" passed as base64 of 16 bytes).
    @Test func base64WithUnusedBitsSetIsRefused() {
        #expect(Base64.decode("dGhlIHNhbXBsZSBub25jZQ==")?.count == 16)
        #expect(Base64.decode("dGhlIHNhbXBsZSBub25jZR==") == nil)
        #expect(Base64.decode("dGhlIHNhbXBsBH==") == nil)
        #expect(Base64.decode("AAB=") == nil)
        #expect(Base64.decode("AAA=") == [0, 0])
        #expect(Base64.decode("AQ==") == [1])
        #expect(Base64.decode("AR==") == nil)
        let head = Array(
            sampleRequest.replacingOccurrences(of: "dGhlIHNhbXBsZSBub25jZQ==", with: "dGhlIHNhbXBsZSBub25jZR==").utf8)
        #expect(throws: WebSocketHandshakeError(status: 400, "Sec-WebSocket-Key is not base64 of 16 bytes")) {
            try WebSocketUpgradeRequest.parse(head: head)
        }
    }

    /// Found by the websocket-handshake fuzz target: "ws://[[1]?/r" was read as the host "[1", which no URL
    /// written from it could name again.
    /// Found by the same target: a status of "-01", "+01" or "032" was read as -1, 1 or 32.
    @Test func aStatusIsThreeDigitsFrom100To599() {
        for status in ["-01", "+01", "1O1", "١٠١", "10", "032", "099", "600"] {
            #expect(throws: WebSocketHandshakeError(status: 0, "malformed status line"), "\(status)") {
                try WebSocketUpgradeResponse.parse(head: Array("HTTP/1.1 \(status) Oops\r\n\r\n".utf8))
            }
        }
        #expect((try? WebSocketUpgradeResponse.parse(head: Array("HTTP/1.1 403 No\r\n\r\n".utf8)))?.status == 403)
    }

    @Test func aBracketInsideTheHostIsRefused() {
        for text in ["ws://[[1]?/r'", "ws://a[b/", "ws://a]b:80/", "ws://[::1]]/"] {
            #expect(throws: WebSocketHandshakeError.self, "\(text)") { try WebSocketURL(text) }
        }
        #expect(throws: WebSocketHandshakeError(status: 0, "URL ws://a]b/ has a bracket inside its host")) {
            try WebSocketURL("ws://a]b/")
        }
        #expect((try? WebSocketURL("ws://[::1]:80/"))?.host == "::1")
    }

    @Test func urls() throws {
        let plain = try WebSocketURL("ws://127.0.0.1:7480/rooms/lobby?token=x")
        #expect(plain == WebSocketURL(secure: false, host: "127.0.0.1", port: 7480, target: "/rooms/lobby?token=x"))
        #expect(plain.hostHeader == "127.0.0.1:7480")
        let secure = try WebSocketURL("wss://example.com")
        #expect(secure == WebSocketURL(secure: true, host: "example.com", port: 443, target: "/"))
        #expect(secure.hostHeader == "example.com")
        let six = try WebSocketURL("ws://[::1]:9000?x=1")
        #expect(six == WebSocketURL(secure: false, host: "::1", port: 9000, target: "/?x=1"))
        #expect(six.hostHeader == "[::1]:9000")
        for bad in ["http://x", "ws://", "ws://h:0", "ws://h:99999", "ws://[::1", "ws://h:port"] {
            #expect(throws: WebSocketHandshakeError.self, "\(bad)") { try WebSocketURL(bad) }
        }
    }
}
