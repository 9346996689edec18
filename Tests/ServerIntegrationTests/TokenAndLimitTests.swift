import ClubroomResources
import Foundation
import RoomClient
import RoomCore
import RoomPersistence
import RoomProtocol
import RoomTesting
import RoomTokens
import RoomTransport
import Synchronization
import Testing

@testable import Crypto

/// Collects what a `RoomSession` reports, for waiting on with a timeout.
final class SessionRecorder: Sendable {
    private let events = Mutex<[SessionEvent]>([])

    func record(_ event: SessionEvent) { events.withLock { $0.append(event) } }

    var all: [SessionEvent] { events.withLock { $0 } }

    func wait(timeout: Double = 10, _ match: (SessionEvent) -> Bool) -> SessionEvent? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = all.first(where: match) { return found }
            usleep(10_000)
        }
        return nil
    }

    func errors(code: ErrorCode) -> Int {
        all.filter {
            if case .message(let message) = $0, case .error(code, _, _) = message.event { return true }
            return false
        }.count
    }
}

/// Opens a session for `identity` and waits for its snapshot.
func joinedSession(
    _ server: ServerProcess, _ identity: String, role: String, name: String? = nil
) throws -> (RoomSession, SessionRecorder) {
    let recorder = SessionRecorder()
    let session = try RoomSession(url: server.url(), token: try server.token(identity, role: role, name: name)) {
        recorder.record($0)
    }
    session.start()
    let joined = recorder.wait {
        if case .message(let message) = $0, case .joined = message.event { return true }
        return false
    }
    guard joined != nil else { throw HarnessError(description: "\(identity) did not join: \(recorder.all)") }
    for _ in 0..<200 where !session.isConnected { usleep(5000) }
    return (session, recorder)
}

@Suite(.ownThread, .serialized) struct TokenRefusalTests {
    /// Each bad token closes the connection before any room state, with its own close code.
    @Test func everyBadTokenIsRefusedWithItsOwnCloseCode() throws {
        try withServer { server, bots in
            let now = Int64(Date().timeIntervalSince1970)
            func claims(
                room: String = "lobby", role: String = "audience", exp: Int64? = nil, nbf: Int64? = nil
            )
                -> TokenClaims
            {
                TokenClaims(
                    subject: "eve", name: "Eve", room: room, role: role, expiresAt: exp ?? now + 3600,
                    notBefore: nbf ?? now - 10)
            }
            let valid = try server.signed(claims())
            let parts = valid.split(separator: ".").map(String.init)
            func unsigned(header: String) -> String {
                Base64URL.encode(Array(header.utf8)) + "." + parts[1] + "."
                    + Base64URL.encode(HMACSHA256.sign(key: Array(repeating: 7, count: 32), message: [1])!)
            }
            let otherSecret = TokenSecret(bytes: Array(repeating: 42, count: 32))
            let cases: [(String, String, UInt16)] = [
                ("bad signature", try TokenIssuer(secret: otherSecret).issue(claims()), 4003),
                ("alg none", Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + parts[1] + ".", 4002),
                ("alg HS512", unsigned(header: #"{"alg":"HS512","typ":"JWT"}"#), 4002),
                ("expired", try server.signed(claims(exp: now - 3600, nbf: now - 7200)), 4004),
                ("not yet valid", try server.signed(claims(nbf: now + 3600)), 4005),
                ("other room", try server.signed(claims(room: "elsewhere")), 4006),
                ("unknown role", try server.signed(claims(role: "wizard")), 4007),
                ("garbage", "not-a-token", 4001),
            ]
            var messages: Set<String> = []
            for (name, token, code) in cases {
                let bot = try server.bot(token)
                bots.append(bot)
                #expect(try bot.waitForExit() == 6, "\(name)")
                let lines = bot.output.all
                #expect(!lines.contains { $0.contains(#""event":"joined""#) }, "\(name)")
                let refusal = lines.compactMap(BotProcess.object).first { $0.string("code") == "refused" }
                let message = refusal?.string("message") ?? ""
                #expect(message.contains("(\(code))"), "\(name): \(lines)")
                messages.insert(message)
            }
            #expect(messages.count == Set(cases.map(\.2)).count)
        }
    }

    /// A token header made to forge a log line: a duplicate key holding a newline, a made-up "joined … as host"
    /// line and an OSC terminal sequence. The refusal is one line, with the key quoted and escaped.
    @Test func aHostileTokenHeaderLeavesOneEscapedLogLine() throws {
        try withServer { server, bots in
            let now = Int64(Date().timeIntervalSince1970)
            let valid = try server.signed(
                TokenClaims(
                    subject: "eve", name: "Eve", room: "lobby", role: "audience", expiresAt: now + 3600,
                    notBefore: now - 10))
            let parts = valid.split(separator: ".").map(String.init)
            let key = #"\u001b]0;owned\u0007\nINFO 127.0.0.1:1: eve joined room lobby as host"#
            let header = #"{"alg":"HS256","typ":"JWT",""# + key + #"":1,""# + key + #"":2}"#
            let token = Base64URL.encode(Array(header.utf8)) + "." + parts[1] + "." + parts[2]
            let bot = try server.bot(token)
            bots.append(bot)
            #expect(try bot.waitForExit() == 6)
            #expect(server.log.wait(timeout: 10) { $0.contains("refused for room lobby") } != nil)
            let lines = server.log.all
            let refusals = lines.filter { $0.contains("refused for room lobby") }
            #expect(refusals.count == 1, "\(refusals)")
            #expect(
                refusals.first?.contains(#"duplicate key "\u{1B}]0;owned\u{07}\nINFO 127.0.0.1:1: eve joined"#) == true,
                "\(refusals)")
            #expect(!lines.contains { $0.contains("joined room lobby as host") && !$0.contains("refused") })
            #expect(!lines.contains { line in line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } })
        }
    }

    @Test func aMissingTokenIsRefused() throws {
        try withServer { server, _ in
            let closed = Mutex<(UInt16, String)?>(nil)
            let client = try WebSocketClient.connect(
                to: server.url(),
                handler: WebSocketClient.Handler(
                    onMessage: { _ in }, onClose: { code, reason in closed.withLock { $0 = (code.rawValue, reason) } }))
            let deadline = Date().addingTimeInterval(10)
            while closed.withLock({ $0 }) == nil, Date() < deadline { usleep(10_000) }
            #expect(closed.withLock { $0?.0 } == 4000)
            // The query still works for browsers, but is not advertised: tokens in URLs end up in logs.
            #expect(closed.withLock { $0?.1 } == "No token: send it as Authorization: Bearer.")
            client.close()
        }
    }
}

@Suite(.ownThread, .serialized) struct LimitTests {
    /// The session pings about a second after connecting and reports the server's answer as a round-trip time.
    @Test func theSessionReportsTheRoundTripOfItsFirstPing() throws {
        try withServer { server, _ in
            let samples = Mutex<[Duration]>([])
            let session = try RoomSession(
                url: server.url(), token: try server.token("eli", role: "audience"),
                roundTrip: { time in samples.withLock { $0.append(time) } }
            ) { _ in }
            defer { session.shutdown() }
            session.start()
            for _ in 0..<500 where samples.withLock({ $0.isEmpty }) { usleep(10_000) }
            let first = samples.withLock { $0.first }
            #expect(first.map { $0 > .zero } == true)
            #expect(session.roundTripTime.map { $0 > .zero } == true)
        }
    }

    @Test func anOversizeFrameClosesWith1009() throws {
        try withServer { server, _ in
            let (session, recorder) = try joinedSession(server, "eli", role: "audience")
            defer { session.shutdown() }
            session.sendRaw(#"{"type":"chat","text":""# + String(repeating: "x", count: 70 * 1024) + #""}"#)
            let ended = recorder.wait {
                if case .reconnecting = $0 { return true }
                if case .ended = $0 { return true }
                return false
            }
            #expect(ended != nil)
            #expect(server.log.wait(timeout: 5) { $0.contains("eli left room lobby (1009") } != nil)
        }
    }

    @Test func duplicateKeysAndUnknownTypesGetAnErrorAndTheConnectionStays() throws {
        try withServer { server, _ in
            let (session, recorder) = try joinedSession(server, "eli", role: "audience")
            defer { session.shutdown() }
            session.sendRaw(#"{"type":"raise_hand","type":"leave","id":1}"#)
            session.sendRaw(#"{"type":"dance","id":2}"#)
            session.sendRaw(#"{"type":"chat","text":"x","to":{"peer":"a","peer":"b"}}"#)
            session.send(.raiseHand)
            let raised = recorder.wait {
                if case .message(let message) = $0, case .handRaised(peer: "eli", _) = message.event { return true }
                return false
            }
            #expect(raised != nil)
            let errors = recorder.all.compactMap { event -> (ErrorCode, RequestID?)? in
                guard case .message(let message) = event, case .error(let code, _, let id) = message.event else {
                    return nil
                }
                return (code, id)
            }
            #expect(errors.map(\.0) == [.duplicateKey, .unknownType, .duplicateKey])
            #expect(errors.map(\.1) == [nil, .integer(2), nil])
        }
    }

    @Test func aFloodIsThrottledWithoutSlowingOthers() throws {
        try withServer { server, _ in
            let (flooder, flood) = try joinedSession(server, "eli", role: "audience")
            let (other, calm) = try joinedSession(server, "fay", role: "audience")
            defer {
                flooder.shutdown()
                other.shutdown()
            }
            for index in 0..<300 { flooder.send(.chat("flood \(index)", to: .peer("eli"))) }
            other.send(.chat("calm", to: .everyone))
            let calmArrived = calm.wait {
                if case .message(let message) = $0, case .chat(let chat) = message.event { return chat.text == "calm" }
                return false
            }
            #expect(calmArrived != nil)
            #expect(flood.wait { _ in flood.errors(code: .rateLimited) > 0 } != nil)
            usleep(300_000)
            let delivered = flood.all.filter {
                if case .message(let message) = $0, case .chat(let chat) = message.event {
                    return chat.text.hasPrefix("flood")
                }
                return false
            }.count
            #expect(delivered >= 20)
            #expect(delivered < 300)
            #expect(calm.errors(code: .rateLimited) == 0)
        }
    }
}

@Suite(.ownThread, .serialized) struct PersistenceAndReconnectTests {
    @Test func topicChatAndAuditSurviveARestart() throws {
        let first = try ServerProcess()
        defer { first.stopAndClean() }
        let ana = try first.joinedBot("ana", role: "host")
        defer { ana.kill() }
        let eli = try first.joinedBot("eli", role: "audience")
        defer { eli.kill() }
        ana.send(#"{"cmd":"topic","text":"kept across restarts"}"#)
        try ana.expect("topic_changed")
        ana.send(#"{"cmd":"chat","text":"remember me"}"#)
        try ana.expect("chat")
        ana.send(#"{"cmd":"set_role","peer":"eli","role":"speaker"}"#)
        try ana.expect("role_changed")
        #expect(try ana.finish() == 0)
        #expect(try eli.finish() == 0)
        first.stop()

        let second = try ServerProcess(directory: first.directory)
        defer { second.stop() }
        let fay = try second.bot(try second.token("fay", role: "audience"))
        defer { fay.kill() }
        let joined = try fay.expect("joined")
        #expect(joined.string("topic") == "kept across restarts")
        let chat = joined.array("chat") ?? []
        #expect(chat.count == 1)
        if case .object(let message)? = chat.first {
            #expect(message.string("text") == "remember me" && message.string("from") == "ana")
        }
        second.stop()

        let database = try RoomDatabase(path: second.dataDirectory + "/" + RoomDatabase.fileName)
        let audit = try database.auditLog(room: "lobby")
        #expect(audit.map(\.action) == ["set_topic", "set_role"])
        #expect(audit.map(\.actor) == ["ana", "ana"])
        #expect(audit.last?.target == "eli" && audit.last?.detail == "speaker")
    }

    @Test func aPendingInvitationSurvivesARestart() throws {
        let first = try ServerProcess()
        defer { first.stopAndClean() }
        let ana = try first.joinedBot("ana", role: "host")
        defer { ana.kill() }
        let eli = try first.joinedBot("eli", role: "audience")
        defer { eli.kill() }
        ana.send(#"{"cmd":"invite","peer":"eli"}"#)
        try eli.expect("invited") { $0.string("peer") == "eli" && $0.string("by") == "ana" }
        first.crash()
        eli.kill()
        ana.kill()

        let second = try ServerProcess(directory: first.directory)
        defer { second.stop() }
        let back = try second.bot(try second.token("eli", role: "audience"))
        defer { back.kill() }
        let joined = try back.expect("joined")
        #expect(joined.object("self")?.string("invited_by") == "ana")
        let host = try second.bot(try second.token("ana", role: "host"))
        defer { host.kill() }
        let seen = try host.expect("joined")
        let peers = seen.array("peers") ?? []
        let pending = peers.compactMap { value -> String? in
            guard case .object(let peer) = value, peer.string("id") == "eli" else { return nil }
            return peer.string("invited_by")
        }
        #expect(pending == ["ana"], "the host sees the invitation still pending")
        back.send(#"{"cmd":"accept_invite"}"#)
        try host.expect("role_changed") { $0.string("peer") == "eli" && $0.string("role") == "speaker" }
    }

    @Test func aPeerBackWithinSixtySecondsGetsItsRoleBack() throws {
        try withServer { server, bots in
            let ana = try server.joinedBot("ana", role: "host")
            let eli = try server.joinedBot("eli", role: "audience")
            bots += [ana, eli]
            ana.send(#"{"cmd":"set_role","peer":"eli","role":"speaker"}"#)
            try eli.expect("role_changed") { $0.string("role") == "speaker" }
            eli.kill()
            try ana.expect("peer_left") { $0.string("peer") == "eli" && $0.string("reason") == "disconnected" }
            let back = try server.bot(try server.token("eli", role: "audience"))
            bots.append(back)
            let joined = try back.expect("joined")
            #expect(joined.object("self")?.string("role") == "speaker")
            #expect(joined.bool("resumed") == true)
        }
    }

    @Test func theBotReconnectsAfterTheServerRestartsAndRebuildsItsState() throws {
        let first = try ServerProcess()
        defer { first.stopAndClean() }
        let ana = try first.joinedBot("ana", role: "host")
        defer { ana.kill() }
        let eli = try first.joinedBot("eli", role: "audience")
        defer { eli.kill() }
        ana.send(#"{"cmd":"set_role","peer":"eli","role":"speaker"}"#)
        try eli.expect("role_changed") { $0.string("role") == "speaker" }
        let port = first.port
        first.stop()
        try eli.expect("reconnecting")
        let second = try ServerProcess(directory: first.directory, port: port)
        defer { second.stop() }
        let reconnected = try eli.expect("reconnected", timeout: 20)
        #expect(reconnected.object("self")?.string("role") == "speaker")
        #expect(reconnected.bool("resumed") == true)
    }
}

@Suite(.ownThread) struct PythonInteropTests {
    /// A Python `websockets` client joins the real server with a token, raises its hand, and is refused with a
    /// bad one.
    @Test func aPythonClientJoinsWithAToken() throws {
        try withServer { server, _ in
            let good = try server.token("py", role: "audience", name: "Python")
            let other = TokenSecret(bytes: Array(repeating: 1, count: 32))
            let now = Int64(Date().timeIntervalSince1970)
            let bad = try TokenIssuer(secret: other).issue(
                TokenClaims(
                    subject: "py", name: "Py", room: "lobby", role: "audience", expiresAt: now + 60, notBefore: now))
            try expectPythonPasses(
                pythonJoinScript, as: server.directory.appendingPathComponent("join.py"),
                arguments: [server.url(), good, bad])
        }
    }
}

extension PythonInteropTests {
    /// A speaker who connects again while still on stage and unmuted (the old connection is replaced) publishes
    /// with a new SSRC at once; the others are told it, so what they hear stays named (and at their volume).
    @Test func aSpeakerWhoReplacesItsConnectionIsNamedWithItsNewSSRC() throws {
        try withServer { server, _ in
            try expectPythonPasses(
                pythonSourcesScript, as: server.directory.appendingPathComponent("sources.py"),
                arguments: [
                    server.url(), try server.token("eli", role: "audience", name: "Eli"),
                    try server.token("ana", role: "speaker", name: "Ana"),
                ])
        }
    }
}

/// Writes `source` (after `pythonChecks`) to `script`, runs it with `arguments` (at most 30 s) and expects it to
/// exit 0 with "ALL OK" as its last line; the output is shown when it does not.
func expectPythonPasses(
    _ source: String, as script: URL, arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
) throws {
    try Data((pythonChecks + source).utf8).write(to: script)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let lines = LineCollector(output.fileHandleForReading)
    let deadline = Date().addingTimeInterval(30)
    while process.isRunning, Date() < deadline { usleep(10_000) }
    if process.isRunning { process.terminate() }
    process.waitUntilExit()
    _ = lines.wait(timeout: 2) { $0 == "ALL OK" }
    #expect(process.terminationStatus == 0, "\(lines.all)", sourceLocation: sourceLocation)
    #expect(lines.all.last == "ALL OK", sourceLocation: sourceLocation)
}

/// `check(name, condition, detail)` for the Python scripts below: prints "ok NAME", or "FAIL NAME DETAIL" and
/// exits 1.
let pythonChecks = #"""
    import sys

    def check(name, condition, detail=""):
        if not condition:
            print(f"FAIL {name} {detail}", flush=True)
            sys.exit(1)
        print(f"ok {name}", flush=True)

    """#

let pythonSourcesScript = #"""
    import json

    from websockets.sync.client import connect

    url, listener, speaker = sys.argv[1], sys.argv[2], sys.argv[3]

    def next_of(ws, kind):
        while True:
            message = ws.recv(timeout=5)
            if isinstance(message, bytes):
                continue
            message = json.loads(message)
            if message.get("type") == kind:
                return message

    def join(token):
        ws = connect(url, additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=5, max_size=None)
        next_of(ws, "joined")
        return ws, next_of(ws, "media")

    eli, _ = join(listener)
    first, offer = join(speaker)
    first.send(json.dumps({"type": "set_mute", "muted": False}))
    sources = next_of(eli, "media_sources")
    check("named on unmuting", sources["sources"] == [{"peer": "ana", "ssrc": offer["ssrc"]}], sources)
    second, again = join(speaker)
    check("a new ssrc", again["ssrc"] != offer["ssrc"], again)
    sources = next_of(eli, "media_sources")
    check("named again", sources["sources"] == [{"peer": "ana", "ssrc": again["ssrc"]}], sources)
    for ws in (second, first, eli):
        ws.close()
    print("ALL OK", flush=True)
    """#

let pythonJoinScript = #"""
    import json

    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    url, good, bad = sys.argv[1], sys.argv[2], sys.argv[3]

    with connect(url, additional_headers={"Authorization": f"Bearer {good}"}, open_timeout=5, max_size=None) as ws:
        joined = json.loads(ws.recv(timeout=5))
        check("joined", joined["type"] == "joined" and joined["self"] == "py", joined)
        check("self listed", any(p["id"] == "py" and p["name"] == "Python" for p in joined["peers"]))
        media = json.loads(ws.recv(timeout=5))
        check("media offered", media["type"] == "media" and len(media["send_key"]) == 40, media)
        ws.send(json.dumps({"type": "raise_hand", "id": 1}))
        event = json.loads(ws.recv(timeout=5))
        check("hand raised", event["type"] == "hand_raised" and event["peer"] == "py", event)
        ws.send('{"type":"raise_hand","type":"raise_hand"}')
        event = json.loads(ws.recv(timeout=5))
        check("duplicate key refused", event["type"] == "error" and event["code"] == "duplicate_key", event)

    with connect(url + "?token=" + good, open_timeout=5, max_size=None) as ws:
        joined = json.loads(ws.recv(timeout=5))
        check("query token", joined["type"] == "joined")

    try:
        with connect(url, additional_headers={"Authorization": f"Bearer {bad}"}, open_timeout=5) as ws:
            ws.recv(timeout=5)
        check("bad token refused", False, "a message arrived")
    except ConnectionClosed as closed:
        check("bad token refused", closed.rcvd is not None and closed.rcvd.code == 4003, closed)
    print("ALL OK", flush=True)
    """#

@Suite(.ownThread) struct ConnectionTests {
    @Test func aFullRoomRefusesTheNextJoiner() throws {
        let server = try ServerProcess(extraArguments: ["--max-peers", "2"])
        defer { server.stopAndClean() }
        let ana = try server.joinedBot("ana", role: "host")
        defer { ana.kill() }
        let eli = try server.joinedBot("eli", role: "audience")
        defer { eli.kill() }
        let fay = try server.bot(try server.token("fay", role: "audience"))
        defer { fay.kill() }
        #expect(try fay.waitForExit() == 6)
        #expect(fay.output.all.contains { $0.contains("(4010)") })
    }

    @Test func aBotThatCannotConnectExitsWithFive() throws {
        let binary = try clubroomBinary()
        let port = try freeLoopbackPort()
        let bot = try BotProcess(
            binary: binary, url: "ws://127.0.0.1:\(port)/rooms/lobby", token: "x.y.z", autoAccept: false)
        defer { bot.kill() }
        #expect(try bot.waitForExit() == 5)
        #expect(bot.output.all.contains { $0.contains(#""code":"connection_failed""#) })
    }

    /// `clubroom serve --tls-cert --tls-key` serves the same protocol over wss://.
    /// TLS 1.2 with forward secrecy and AEAD only: static-RSA and CBC suites are refused, and the server's order
    /// wins over the client's.
    @Test func theServerOffersOnlyForwardSecretAEADSuitesInItsOwnOrder() throws {
        let (certificate, key, folderPath) = try makeSelfSignedCertificate()
        let folder = URL(fileURLWithPath: folderPath)
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ServerProcess(
            directory: folder.appendingPathComponent("server"),
            extraArguments: ["--tls-cert", certificate, "--tls-key", key])
        defer { server.stop() }
        func handshake(_ ciphers: String) throws -> (ok: Bool, cipher: String) {
            let result = try ChildProcess([
                "openssl", "s_client", "-connect", "127.0.0.1:\(server.port)", "-tls1_2", "-cipher", ciphers,
            ]).finish(seconds: 15)
            let line = result.standardOutput.split(separator: "\n").first { $0.contains("Cipher is") } ?? ""
            let cipher = line.components(separatedBy: "Cipher is ").last ?? ""
            return (result.status == 0 && !cipher.isEmpty && cipher != "(NONE)", cipher)
        }
        for refused in ["AES128-SHA", "AES256-GCM-SHA384", "ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES256-SHA384"] {
            #expect(try handshake(refused).ok == false, "\(refused)")
        }
        let chosen = try handshake("ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256")
        #expect(chosen.ok)
        // The client asked for ChaCha20 first; the server prefers AES-GCM.
        #expect(chosen.cipher == "ECDHE-RSA-AES128-GCM-SHA256", "\(chosen)")
    }

    @Test func theServerSpeaksTLS() throws {
        let (certificate, key, folderPath) = try makeSelfSignedCertificate()
        let folder = URL(fileURLWithPath: folderPath)
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ServerProcess(
            directory: folder.appendingPathComponent("server"),
            extraArguments: ["--tls-cert", certificate, "--tls-key", key])
        defer { server.stop() }
        #expect(server.log.all.contains { $0.contains("listening on wss://127.0.0.1:") })
        let recorder = SessionRecorder()
        let session = try RoomSession(
            url: "wss://127.0.0.1:\(server.port)/rooms/lobby", token: try server.token("eli", role: "audience"),
            tls: TLSClientConfiguration(caFile: certificate)
        ) { recorder.record($0) }
        defer { session.shutdown() }
        session.start()
        let joined = recorder.wait {
            if case .message(let message) = $0, case .joined(let snapshot) = message.event {
                return snapshot.selfID == "eli"
            }
            return false
        }
        #expect(joined != nil, "\(recorder.all)")
    }
}
