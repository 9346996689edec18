import Dispatch
import RoomProtocol
import RoomTesting
import RoomTransport
import Synchronization
import Testing
import WebSocket

/// One of the Autobahn|Testsuite's cases as a server plays it against a client: the bytes the server writes, one
/// write per chunk, and what the client must do with them: the messages it delivers, every frame it writes back
/// (pongs and its close frame, exactly), and the close it reports.
struct ClientCase: Sendable, CustomTestStringConvertible {
    let id: String
    let about: String
    let chunks: [[UInt8]]
    let delivered: [WebSocketPayload]
    let sent: [WebSocketMessage]
    let closed: CloseSeen

    var testDescription: String { "\(id) \(about)" }

    /// A case the client must get through: after the chunks the server closes normally (1000 "done"), and the
    /// client answers the pings, delivers the messages and echoes the close.
    static func passes(
        _ id: String, _ about: String, _ chunks: [[UInt8]], delivers delivered: [WebSocketPayload] = [],
        pongs: [[UInt8]] = []
    ) -> ClientCase {
        ClientCase(
            id: id, about: about, chunks: chunks + [serverClose(1000, "done")], delivered: delivered,
            sent: pongs.map { .pong($0) } + [.close(code: .normal, reason: "")], closed: CloseSeen(1000, "done"))
    }

    /// A case the client must refuse: it delivers what came before the fault, answers the pings before it, then
    /// closes with `code` and `reason` at once. The server sends nothing after the chunks, so a client that waits
    /// for more (a message's end, say) before it refuses is caught: it never closes.
    static func fails(
        _ id: String, _ about: String, _ chunks: [[UInt8]], delivers delivered: [WebSocketPayload] = [],
        pongs: [[UInt8]] = [], code: UInt16, _ reason: String
    ) -> ClientCase {
        ClientCase(
            id: id, about: about, chunks: chunks, delivered: delivered,
            sent: pongs.map { .pong($0) } + [.close(code: WebSocketCloseCode(code), reason: reason)],
            closed: CloseSeen(code, reason))
    }

    /// A case where the server closes with its own close frame `close` (sent after the chunks): the client
    /// delivers `delivered`, answers with `answer` and reports `closed`.
    static func closes(
        _ id: String, _ about: String, _ chunks: [[UInt8]], delivers delivered: [WebSocketPayload] = [],
        answer: [WebSocketMessage], reports closed: CloseSeen
    ) -> ClientCase {
        ClientCase(id: id, about: about, chunks: chunks, delivered: delivered, sent: answer, closed: closed)
    }
}

/// The close a client reports through its handler.
struct CloseSeen: Sendable, Equatable, CustomStringConvertible {
    let code: UInt16
    let reason: String
    init(_ code: UInt16, _ reason: String) {
        self.code = code
        self.reason = reason
    }
    var description: String { "\(code) \(reason.debugDescription)" }
}

private func text(_ string: String) -> [UInt8] { Array(string.utf8) }

private func serverClose(_ code: UInt16, _ reason: String) -> [UInt8] {
    rawFrame(opcode: 8, [UInt8(code >> 8), UInt8(code & 0xFF)] + text(reason))
}

/// Every byte of `bytes` in a write of its own.
private func bytewise(_ bytes: [UInt8]) -> [[UInt8]] { bytes.map { [$0] } }

/// `bytes` in writes of `size`.
private func chopped(_ bytes: [UInt8], _ size: Int) -> [[UInt8]] {
    stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
}

/// A text message sent as one frame per piece.
private func fragments(_ pieces: [[UInt8]], opcode: UInt8 = 1) -> [[UInt8]] {
    pieces.enumerated().map { index, piece in
        rawFrame(fin: index == pieces.count - 1, opcode: index == 0 ? opcode : 0, piece)
    }
}

/// The Autobahn|Testsuite's sections 1–7 (and a message over the client's limit, section 9's concern), played by
/// a server: what our client must do with each. The reasons are our decoder's (docs/transport.md).
enum AutobahnCases {
    static let kosme: [UInt8] = [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5]
    static let notUTF8 = "text message is not valid UTF-8"
    static let session = ControlLimits.maxServerMessageBytes

    static let framing: [ClientCase] = {
        var cases: [ClientCase] = []
        for (index, length) in [0, 125, 126, 127, 128, 65535, 65536].enumerated() {
            let payload = (0..<length).map { UInt8(0x41 + $0 % 26) }
            cases.append(
                .passes(
                    "1.1.\(index + 1)", "text of \(length) bytes", [rawFrame(opcode: 1, payload)],
                    delivers: [.text(String(decoding: payload, as: UTF8.self))]))
            let binary = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            cases.append(
                .passes(
                    "1.2.\(index + 1)", "binary of \(length) bytes", [rawFrame(opcode: 2, binary)],
                    delivers: [.binary(binary)]))
        }
        let long = (0..<65536).map { UInt8(0x61 + $0 % 26) }
        cases.append(
            .passes(
                "1.1.8", "text of 65536 bytes in writes of 997", chopped(rawFrame(opcode: 1, long), 997),
                delivers: [.text(String(decoding: long, as: UTF8.self))]))
        cases.append(
            .fails(
                "—", "a frame the server masked (RFC 6455 5.1)",
                [rawFrame(opcode: 1, text("hello"), mask: [1, 2, 3, 4])],
                code: 1002, "server frame masked"))
        cases.append(
            .fails(
                "—", "a 64-bit length with its top bit set", [[0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 1]], code: 1002,
                "64-bit length with the top bit set"))
        return cases
    }()

    static let pings: [ClientCase] = {
        let binary: [UInt8] = [0x00, 0xFF, 0xFE, 0xFD, 0xFC, 0xFB, 0x00, 0xFF]
        let longest = [UInt8](repeating: 0xFE, count: 125)
        return [
            .passes("2.1", "ping without payload", [rawFrame(opcode: 9)], pongs: [[]]),
            .passes(
                "2.2", "ping with text payload", [rawFrame(opcode: 9, text("Hello, world!"))],
                pongs: [text("Hello, world!")]),
            .passes("2.3", "ping with binary payload", [rawFrame(opcode: 9, binary)], pongs: [binary]),
            .passes("2.4", "ping of 125 bytes", [rawFrame(opcode: 9, longest)], pongs: [longest]),
            .fails(
                "2.5", "ping of 126 bytes", [rawFrame(opcode: 9, [UInt8](repeating: 0xFE, count: 126))], code: 1002,
                "control frame longer than 125 bytes"),
            .passes(
                "2.6", "ping of 125 bytes, a byte a write", bytewise(rawFrame(opcode: 9, longest)), pongs: [longest]),
            .passes("2.7", "unsolicited pong without payload", [rawFrame(opcode: 10)]),
            .passes("2.8", "unsolicited pong with payload", [rawFrame(opcode: 10, text("unsolicited pong payload"))]),
            .passes(
                "2.9", "unsolicited pong, then ping",
                [rawFrame(opcode: 10, text("unsolicited pong payload")), rawFrame(opcode: 9, text("ping payload"))],
                pongs: [text("ping payload")]),
            .passes(
                "2.10", "ten pings", (0..<10).map { rawFrame(opcode: 9, text("payload-\($0)")) },
                pongs: (0..<10).map { text("payload-\($0)") }),
            .passes(
                "2.11", "ten pings, a byte a write",
                (0..<10).flatMap { bytewise(rawFrame(opcode: 9, text("payload-\($0)"))) },
                pongs: (0..<10).map { text("payload-\($0)") }),
        ]
    }()

    static let reservedBits: [ClientCase] = [
        .fails(
            "3.1", "RSV1 on a text frame", [rawFrame(rsv: 4, opcode: 1, text("Hello, world!"))], code: 1002,
            "reserved bits set"),
        .fails(
            "3.2", "RSV2 on a text frame after a good one",
            [rawFrame(opcode: 1, text("Hello, world!")), rawFrame(rsv: 2, opcode: 1, text("Hello, world!"))],
            delivers: [.text("Hello, world!")], code: 1002, "reserved bits set"),
        .fails(
            "3.3", "RSV1|RSV2 in the same write as a good frame and a ping",
            [
                rawFrame(opcode: 1, text("Hello, world!")) + rawFrame(rsv: 6, opcode: 1, text("Hello, world!"))
                    + rawFrame(opcode: 9)
            ],
            delivers: [.text("Hello, world!")], code: 1002, "reserved bits set"),
        .fails(
            "3.4", "RSV3 a byte a write",
            bytewise(rawFrame(opcode: 1, text("Hello, world!")) + rawFrame(rsv: 1, opcode: 1, text("Hello, world!"))),
            delivers: [.text("Hello, world!")], code: 1002, "reserved bits set"),
        .fails(
            "3.5", "RSV1|RSV3 on a binary frame", [rawFrame(rsv: 5, opcode: 2, [0, 1, 2])], code: 1002,
            "reserved bits set"),
        .fails(
            "3.6", "RSV2|RSV3 on a ping", [rawFrame(rsv: 3, opcode: 9, text("ping"))], code: 1002, "reserved bits set"),
        .fails(
            "3.7", "every RSV bit on a close", [rawFrame(rsv: 7, opcode: 8, [3, 0xE8])], code: 1002, "reserved bits set"
        ),
    ]

    static let opcodes: [ClientCase] = {
        var cases: [ClientCase] = []
        for (index, opcode) in [3, 4, 5, 6, 7].enumerated() {
            cases.append(
                .fails(
                    "4.1.\(index + 1)", "reserved data opcode \(opcode) after a text frame, then a ping",
                    [
                        rawFrame(opcode: 1, text("Hello")), rawFrame(opcode: UInt8(opcode), text("reserved")),
                        rawFrame(opcode: 9),
                    ],
                    delivers: [.text("Hello")], code: 1002, "unknown opcode \(opcode)"))
        }
        for (index, opcode) in [11, 12, 13, 14, 15].enumerated() {
            cases.append(
                .fails(
                    "4.2.\(index + 1)", "reserved control opcode \(opcode) after a text frame, then a ping",
                    [rawFrame(opcode: 1, text("Hello")), rawFrame(opcode: UInt8(opcode)), rawFrame(opcode: 9)],
                    delivers: [.text("Hello")], code: 1002, "unknown opcode \(opcode)"))
        }
        return cases
    }()

    static let fragmentation: [ClientCase] = [
        .fails(
            "5.1", "a fragmented ping", fragments([text("frag"), text("ment")], opcode: 9), code: 1002,
            "fragmented control frame"),
        .fails(
            "5.2", "a fragmented pong", fragments([text("frag"), text("ment")], opcode: 10), code: 1002,
            "fragmented control frame"),
        .passes(
            "5.3", "text in two fragments", fragments([text("fragment1"), text("fragment2")]),
            delivers: [.text("fragment1fragment2")]),
        .passes(
            "5.4", "text in two fragments, a byte a write",
            bytewise(fragments([text("fragment1"), text("fragment2")]).joined().map { $0 }),
            delivers: [.text("fragment1fragment2")]),
        .passes(
            "5.6", "a ping between the fragments",
            [
                rawFrame(fin: false, opcode: 1, text("fragment1")), rawFrame(opcode: 9, text("pongme!")),
                rawFrame(opcode: 0, text("fragment2")),
            ],
            delivers: [.text("fragment1fragment2")], pongs: [text("pongme!")]),
        .passes(
            "5.7", "a ping between the fragments, a byte a write",
            bytewise(
                rawFrame(fin: false, opcode: 1, text("fragment1")) + rawFrame(opcode: 9, text("pongme!"))
                    + rawFrame(opcode: 0, text("fragment2"))),
            delivers: [.text("fragment1fragment2")], pongs: [text("pongme!")]),
        .passes(
            "5.8", "an unsolicited pong between binary fragments",
            [rawFrame(fin: false, opcode: 2, [1, 2]), rawFrame(opcode: 10, text("late")), rawFrame(opcode: 0, [3])],
            delivers: [.binary([1, 2, 3])]),
        .fails(
            "5.9", "a final continuation with nothing to continue",
            [rawFrame(opcode: 0, text("fragment1")), rawFrame(opcode: 1, text("fragment2"))], code: 1002,
            "continuation frame without a message to continue"),
        .fails(
            "5.10", "the same, a byte a write", bytewise(rawFrame(opcode: 0, text("fragment1"))), code: 1002,
            "continuation frame without a message to continue"),
        .fails(
            "5.12", "an unfinished continuation with nothing to continue",
            [rawFrame(fin: false, opcode: 0, text("fragment1"))],
            code: 1002, "continuation frame without a message to continue"),
        .fails(
            "5.15", "text, then a continuation after the message ended",
            [
                rawFrame(fin: false, opcode: 1, text("fragment1")), rawFrame(opcode: 0, text("fragment2")),
                rawFrame(fin: false, opcode: 0, text("fragment3")), rawFrame(opcode: 1, text("fragment4")),
            ], delivers: [.text("fragment1fragment2")], code: 1002, "continuation frame without a message to continue"),
        .fails(
            "5.18", "a new text frame inside an unfinished text message",
            [rawFrame(fin: false, opcode: 1, text("fragment1")), rawFrame(opcode: 1, text("fragment2"))], code: 1002,
            "new data frame inside a fragmented message"),
        .fails(
            "—", "a binary frame inside an unfinished text message",
            [rawFrame(fin: false, opcode: 1, text("fragment1")), rawFrame(opcode: 2, [1])], code: 1002,
            "new data frame inside a fragmented message"),
        .passes(
            "5.19", "pings between five fragments",
            [
                rawFrame(fin: false, opcode: 1, text("fragment1")), rawFrame(fin: false, opcode: 0, text("fragment2")),
                rawFrame(opcode: 9, text("pongme 1!")), rawFrame(fin: false, opcode: 0, text("fragment3")),
                rawFrame(fin: false, opcode: 0, text("fragment4")), rawFrame(opcode: 9, text("pongme 2!")),
                rawFrame(opcode: 0, text("fragment5")),
            ], delivers: [.text("fragment1fragment2fragment3fragment4fragment5")],
            pongs: [text("pongme 1!"), text("pongme 2!")]),
    ]

    static let utf8: [ClientCase] = {
        let hello = text("Hello-µ@ßöäüàá-UTF-8!!")
        var cases: [ClientCase] = [
            .passes("6.1.1", "an empty text message", [rawFrame(opcode: 1)], delivers: [.text("")]),
            .passes(
                "6.1.2", "an empty text message in three empty fragments", fragments([[], [], []]),
                delivers: [.text("")]),
            .passes(
                "6.2.1", "valid UTF-8 in one frame", [rawFrame(opcode: 1, hello)],
                delivers: [.text("Hello-µ@ßöäüàá-UTF-8!!")]),
            .passes(
                "6.2.2", "valid UTF-8 in two fragments cut inside a character",
                fragments([Array(hello[..<7]), Array(hello[7...])]), delivers: [.text("Hello-µ@ßöäüàá-UTF-8!!")]),
            .passes(
                "6.2.3", "valid UTF-8, one byte per fragment", fragments(hello.map { [$0] }),
                delivers: [.text("Hello-µ@ßöäüàá-UTF-8!!")]),
            .passes("6.2.4", "κόσμε, one byte per fragment", fragments(kosme.map { [$0] }), delivers: [.text("κόσμε")]),
            .passes(
                "6.3.x", "a character cut between two writes of one frame", chopped(rawFrame(opcode: 1, kosme), 3),
                delivers: [.text("κόσμε")]),
            .fails(
                "6.3.1", "invalid UTF-8 (a surrogate) in one frame",
                [rawFrame(opcode: 1, kosme + [0xED, 0xA0, 0x80] + text("edited"))],
                code: 1007, notUTF8),
            .fails(
                "6.3.2", "the same, one byte per fragment",
                fragments((kosme + [0xED, 0xA0, 0x80] + text("edited")).map { [$0] }),
                code: 1007, notUTF8),
            // Fail fast (RFC 6455 8.1): the rest of the message never comes, so only a client that refuses as soon
            // as the bytes cannot be UTF-8 closes.
            .fails(
                "6.4.1", "invalid bytes in the second of three fragments",
                [rawFrame(fin: false, opcode: 1, kosme), rawFrame(fin: false, opcode: 0, [0xF4, 0x90, 0x80, 0x80])],
                code: 1007, notUTF8),
            .fails(
                "6.4.2", "a character begun in one fragment that the next cannot end",
                [
                    rawFrame(fin: false, opcode: 1, kosme + [0xF4]),
                    rawFrame(fin: false, opcode: 0, [0x90, 0x80, 0x80]),
                ],
                code: 1007, notUTF8),
            .fails(
                "6.4.3", "invalid bytes in the middle of one frame, its end not sent",
                Array(
                    chopped(
                        rawFrame(opcode: 1, kosme + [0xF4, 0x90, 0x80, 0x80] + text("edited")), 2 + kosme.count + 4
                    ).prefix(1)),
                code: 1007, notUTF8),
            .fails(
                "6.4.4", "a character begun in one write of a frame that the next byte cannot end",
                [
                    Array(
                        rawFrame(opcode: 1, kosme + [0xF4, 0x90, 0x80, 0x80] + text("edited")).prefix(
                            2 + kosme.count + 1)), [0x90],
                ],
                code: 1007, notUTF8),
            .fails(
                "6.x", "a text message that ends inside a character",
                fragments([text("κ") + [0xCE], []]), code: 1007, notUTF8),
            .fails(
                "6.x", "a single frame that ends inside a character", [rawFrame(opcode: 1, [0x41, 0xE2, 0x82])],
                code: 1007, notUTF8),
        ]
        let valid: [(String, [UInt8], String)] = [
            ("U+0000", [0x00], "\u{0}"), ("U+007F", [0x7F], "\u{7F}"), ("U+0080", [0xC2, 0x80], "\u{80}"),
            ("U+07FF", [0xDF, 0xBF], "\u{7FF}"), ("U+0800", [0xE0, 0xA0, 0x80], "\u{800}"),
            ("U+D7FF", [0xED, 0x9F, 0xBF], "\u{D7FF}"), ("U+E000", [0xEE, 0x80, 0x80], "\u{E000}"),
            ("U+FFFF", [0xEF, 0xBF, 0xBF], "\u{FFFF}"), ("U+10000", [0xF0, 0x90, 0x80, 0x80], "\u{10000}"),
            ("U+10FFFF", [0xF4, 0x8F, 0xBF, 0xBF], "\u{10FFFF}"),
        ]
        for (name, bytes, string) in valid {
            cases.append(.passes("6.5–6.7", "\(name), alone", [rawFrame(opcode: 1, bytes)], delivers: [.text(string)]))
        }
        let invalid: [(String, [UInt8])] = [
            ("a lone continuation byte", [0x80]), ("a lone 0xFE", [0xFE]), ("a lone 0xFF", [0xFF]),
            ("an overlong '/' in two bytes", [0xC0, 0xAF]), ("an overlong '/' in three bytes", [0xE0, 0x80, 0xAF]),
            ("an overlong '/' in four bytes", [0xF0, 0x80, 0x80, 0xAF]),
            ("a five-byte sequence", [0xF8, 0x88, 0x80, 0x80, 0x80]),
            ("U+D800 (a surrogate)", [0xED, 0xA0, 0x80]), ("U+DFFF (a surrogate)", [0xED, 0xBF, 0xBF]),
            ("U+110000", [0xF4, 0x90, 0x80, 0x80]), ("a character cut short by another", [0xE2, 0x82, 0x41]),
        ]
        for (name, bytes) in invalid {
            cases.append(.fails("6.8–6.21", name, [rawFrame(opcode: 1, text("ok") + bytes)], code: 1007, notUTF8))
        }
        return cases
    }()

    static let closing: [ClientCase] = {
        var cases: [ClientCase] = [
            .closes(
                "7.1.1", "a message, then the server's close",
                [rawFrame(opcode: 1, text("Hello World!")), serverClose(1000, "")],
                delivers: [.text("Hello World!")], answer: [.close(code: .normal, reason: "")],
                reports: CloseSeen(1000, "")),
            .closes(
                "7.1.2", "two close frames", [serverClose(1000, ""), serverClose(1000, "")],
                answer: [.close(code: .normal, reason: "")], reports: CloseSeen(1000, "")),
            .closes(
                "7.1.3", "a ping after the close", [serverClose(1000, ""), rawFrame(opcode: 9, text("too late"))],
                answer: [.close(code: .normal, reason: "")], reports: CloseSeen(1000, "")),
            .closes(
                "7.1.4", "a message after the close", [serverClose(1000, ""), rawFrame(opcode: 1, text("too late"))],
                answer: [.close(code: .normal, reason: "")], reports: CloseSeen(1000, "")),
            .closes(
                "7.1.5", "a close inside an unfinished message",
                [
                    rawFrame(fin: false, opcode: 1, text("fragment1")), serverClose(1000, ""),
                    rawFrame(opcode: 0, text("fragment2")),
                ],
                answer: [.close(code: .normal, reason: "")], reports: CloseSeen(1000, "")),
            .closes(
                "7.3.1", "a close without payload", [rawFrame(opcode: 8)], answer: [.close(code: nil, reason: "")],
                reports: CloseSeen(1005, "")),
            .fails(
                "7.3.2", "a close with a 1-byte payload", [rawFrame(opcode: 8, [0x03])], code: 1002,
                "close frame with a 1-byte payload"),
            .closes(
                "7.3.3", "a close with a code and no reason", [serverClose(1000, "")],
                answer: [.close(code: .normal, reason: "")],
                reports: CloseSeen(1000, "")),
            .closes(
                "7.3.4", "a close with a code and a reason", [serverClose(1000, "Hello World!")],
                answer: [.close(code: .normal, reason: "")], reports: CloseSeen(1000, "Hello World!")),
            .closes(
                "7.3.5", "a close with a reason of 123 bytes", [serverClose(1000, String(repeating: "*", count: 123))],
                answer: [.close(code: .normal, reason: "")],
                reports: CloseSeen(1000, String(repeating: "*", count: 123))),
            .fails(
                "7.3.6", "a close with a reason of 124 bytes (126 in all)",
                [serverClose(1000, String(repeating: "*", count: 124))],
                code: 1002, "control frame longer than 125 bytes"),
            .fails(
                "7.5.1", "a close whose reason is not UTF-8",
                [rawFrame(opcode: 8, [0x03, 0xE8] + kosme + [0xED, 0xA0, 0x80])],
                code: 1007, "close reason is not valid UTF-8"),
        ]
        for (index, code) in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999].enumerated()
        {
            let closeCode = UInt16(code)
            cases.append(
                .closes(
                    "7.7.\(index + 1)", "close code \(code)", [serverClose(closeCode, "")],
                    answer: [.close(code: WebSocketCloseCode(closeCode), reason: "")], reports: CloseSeen(closeCode, "")
                ))
        }
        for (index, code) in [0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999].enumerated() {
            cases.append(
                .fails(
                    "7.9.\(index + 1)", "close code \(code)", [serverClose(UInt16(code), "")], code: 1002,
                    "invalid close code \(code)"))
        }
        for (index, code) in [5000, 65535].enumerated() {
            cases.append(
                .fails(
                    "7.13.\(index + 1)", "close code \(code)", [serverClose(UInt16(code), "")], code: 1002,
                    "invalid close code \(code)"))
        }
        return cases
    }()

    /// Messages over what a room session accepts (16 MiB): refused with 1009 from the frame's header, before the
    /// payload would be read, whole or adding up fragment by fragment.
    static let limits: [ClientCase] = {
        let over = UInt64(session + 1)
        let header: [UInt8] = [0x82, 127] + (0..<8).map { UInt8(truncatingIfNeeded: over >> (56 - 8 * UInt64($0))) }
        let first = [UInt8](repeating: 1, count: 65536)
        let rest = UInt64(session - 65536 + 1)
        let continuation: [UInt8] =
            [0x80, 127] + (0..<8).map { UInt8(truncatingIfNeeded: rest >> (56 - 8 * UInt64($0))) }
        return [
            .fails(
                "9.x", "a binary message one byte over the session's 16 MiB", [header], code: 1009,
                "message larger than \(session) bytes"),
            .fails(
                "9.x", "fragments adding up to one byte over 16 MiB",
                [rawFrame(fin: false, opcode: 2, first), continuation],
                code: 1009, "message larger than \(session) bytes"),
        ]
    }()

    static let all = framing + pings + reservedBits + opcodes + fragmentation + utf8 + closing + limits
}

/// What the client's handler saw.
final class ClientSeen: Sendable {
    private let state = Mutex<(payloads: [WebSocketPayload], closed: CloseSeen?)>(([], nil))
    private let closedSignal = DispatchSemaphore(value: 0)

    func message(_ payload: WebSocketPayload) { state.withLock { $0.payloads.append(payload) } }

    func closed(_ code: WebSocketCloseCode, _ reason: String) {
        state.withLock { $0.closed = CloseSeen(code.rawValue, reason) }
        closedSignal.signal()
    }

    /// Waits up to `seconds` for the close; returns the messages and the close.
    func waitForClose(seconds: Double = 5) -> (payloads: [WebSocketPayload], closed: CloseSeen?) {
        _ = closedSignal.wait(timeout: .now() + seconds)
        return state.withLock { $0 }
    }
}

/// The options a room session's connection has (`RoomSession.connect`), but for the ping timer: the client's
/// own pings would be frames of its own in the exact list of what it writes, so they wait a minute.
func sessionOptions() -> WebSocketOptions {
    var options = WebSocketOptions()
    options.maxMessageSize = ControlLimits.maxServerMessageBytes
    options.idleTimeout = .seconds(10)
    options.pingInterval = .seconds(60)
    return options
}

/// Our client (`WebSocketClient`, under `clubroom join` and `clubroom bot`) against a server that sends the
/// Autobahn|Testsuite's frames: each case states what the client delivers, every frame it writes back, and the
/// close it reports.
@Suite(.ownThread) struct AutobahnClientTests {
    @Test(arguments: AutobahnCases.all)
    func theClientHandlesTheCase(_ testCase: ClientCase) throws {
        let written = Mutex<(bytes: [UInt8], ended: Bool)>(([], false))
        let peer = try RawWebSocketPeer { connection in
            connection.send(chunks: testCase.chunks)
            let answer = connection.readUntilEnd(seconds: 5)
            written.withLock { $0 = answer }
        }
        let seen = ClientSeen()
        let client = try WebSocketClient.connect(
            to: peer.url, options: sessionOptions(),
            handler: .init(onMessage: { seen.message($0) }, onClose: { seen.closed($0, $1) }))
        defer { client.close() }
        #expect(peer.waitUntilDone(seconds: 20), "the peer's script did not end")
        let answer = written.withLock { $0 }
        let (messages, error) = RawPeerConnection.messages(in: answer.bytes)
        #expect(error == nil, "the client's own frames are broken: \(String(describing: error))")
        #expect(messages == testCase.sent)
        #expect(answer.ended, "the client did not end its side of the connection after the close")
        let (payloads, closed) = seen.waitForClose()
        #expect(payloads == testCase.delivered)
        #expect(closed == testCase.closed)
    }

    @Test func everyCaseHasAnOutcomeAndTheyAreMany() {
        // Sections 1–7 as listed above, and the limits: a list that lost its cases would pass vacuously.
        #expect(AutobahnCases.all.count >= 120)
    }
}
