import Foundation
import RoomTesting
import RoomTransport
import Testing
import WebSocket

/// Our server and client against Python's `websockets` (installed by `make test-deps`).
@Suite(.ownThread) struct InteropTests {
    @Test func pythonClientAgainstOurServer() throws {
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(options: TLSTests.patientOptions, recorder: serverEvents)
        defer { server.shutdown() }
        let script = interopDirectory.appendingPathComponent("client_against_server.py").path
        let result = try ChildProcess(["python3", script, "ws://127.0.0.1:\(server.port)/rooms/py"]).finish()
        let failures = serverEvents.all.filter { $0.failedHandshakeProblem != nil }
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)\nserver: \(failures)")
        #expect(failures.isEmpty)
        #expect(result.standardOutput.hasSuffix("ALL OK\n"))
        #expect(serverEvents.wait(for: 99, seconds: 1).contains(.closed(4005, "py bye")))
        #expect(serverEvents.all.contains(.closed(1009, "message larger than 65536 bytes")))
    }

    @Test func ourClientAgainstPythonServer() throws {
        let script = interopDirectory.appendingPathComponent("echo_server.py").path
        let child = try ChildProcess(["python3", script])
        defer { child.kill() }
        let port = try #require(child.firstLine().flatMap { Int($0) })
        var headers = HTTPHeaders()
        headers.add("Authorization", "Bearer t0k3n")
        var options = WebSocketOptions()
        options.idleTimeout = .milliseconds(1000)
        options.pingInterval = .seconds(60)
        let (client, events) = try connectClient(
            "ws://127.0.0.1:\(port)/rooms/py?x=1", options: options, headers: headers)
        client.send(text: "héllo ✓")
        client.send(binary: [0, 1, 255])
        client.send(text: "fragment")
        client.send(text: "path")
        client.send(text: "auth")
        #expect(
            events.wait(for: 5) == [
                .message(.text("héllo ✓")), .message(.binary([0, 1, 255])), .message(.text("abc")),
                .message(.text("/rooms/py?x=1")), .message(.text("Bearer t0k3n")),
            ])
        // The Python server pings every 0.2 s: its pings alone keep our idle timer from firing.
        usleep(2_500_000)
        client.send(text: "after pings")
        #expect(events.wait(for: 6).last == .message(.text("after pings")))
        client.send(text: "close 4002 python bye")
        #expect(events.wait(for: 7).last == .closed(4002, "python bye"))

        let (oversize, oversizeEvents) = try connectClient("ws://127.0.0.1:\(port)/")
        oversize.send(binary: [UInt8](repeating: 1, count: 2000))
        let closed = oversizeEvents.wait(for: 1)
        #expect(closed.count == 1)
        if case .closed(let code, _) = closed.first { #expect(code == 1009) } else { Issue.record("no close") }
    }
}

/// `wss://` with a certificate made at test time.
@Suite(.ownThread) struct TLSTests {
    /// The Python client allows 30 s for its opening handshake; the server allows as long, since on a loaded
    /// machine the interpreter can stall mid-handshake for longer than the default 10 s.
    static let patientOptions: WebSocketOptions = {
        var options = WebSocketOptions()
        options.handshakeTimeout = .seconds(30)
        return options
    }()

    @Test func ourClientAndPythonAgainstOurTLSServer() throws {
        let (certificate, key, folder) = try makeSelfSignedCertificate()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(
            tls: TLSServerConfiguration(certificateFile: certificate, privateKeyFile: key),
            options: Self.patientOptions, recorder: serverEvents)
        defer { server.shutdown() }
        let url = "wss://127.0.0.1:\(server.port)/rooms/secure"
        let (client, events) = try connectClient(url, tls: TLSClientConfiguration(caFile: certificate))
        let big = [UInt8](repeating: 9, count: 50_000)
        client.send(text: "secret")
        for _ in 0..<40 { client.send(binary: big) }
        let expected = [ClientEvent.message(.text("secret"))] + Array(repeating: .message(.binary(big)), count: 40)
        #expect(events.wait(for: 41) == expected)
        client.close(code: .normal, reason: "done")
        #expect(events.wait(for: 42).last == .closed(1000, "done"))

        let script = interopDirectory.appendingPathComponent("client_against_server.py").path
        let result = try ChildProcess(["python3", script, url, certificate]).finish()
        let failures = serverEvents.all.filter { $0.failedHandshakeProblem != nil }
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)\nserver: \(failures)")
        #expect(result.standardOutput.hasSuffix("ALL OK\n"))
        #expect(failures.isEmpty)
    }

    @Test func clientRefusesAnUntrustedCertificate() throws {
        let (certificate, key, folder) = try makeSelfSignedCertificate()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(
            tls: TLSServerConfiguration(certificateFile: certificate, privateKeyFile: key), recorder: serverEvents)
        defer { server.shutdown() }
        do {
            _ = try connectClient("wss://127.0.0.1:\(server.port)/rooms/secure")
            Issue.record("connected to an untrusted server")
        } catch let error as TransportError {
            #expect(error.problem.contains("certificate"), "\(error)")
            #expect(error.cause == .untrustedCertificate, "\(error)")
        }
        // The server sees the client give up during the TLS handshake.
        expectOneFailedHandshake(serverEvents) { problem in
            problem.hasPrefix("TLS handshake") || problem.contains("during the TLS handshake")
        }
    }

    @Test func plainTextToATLSServerIsAFailedHandshakeOfThatConnectionOnly() throws {
        let (certificate, key, folder) = try makeSelfSignedCertificate()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(
            tls: TLSServerConfiguration(certificateFile: certificate, privateKeyFile: key), recorder: serverEvents)
        defer { server.shutdown() }
        let raw = try RawSocket(port: server.port)
        raw.send(Array("GET /rooms/plain HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        expectOneFailedHandshake(serverEvents) { problem in problem.hasPrefix("TLS handshake: ") }
        #expect(raw.readAll(seconds: 2).count < 64)
        let (client, events) = try connectClient(
            "wss://127.0.0.1:\(server.port)/rooms/secure", tls: TLSClientConfiguration(caFile: certificate))
        client.send(text: "still here")
        #expect(events.wait(for: 1) == [.message(.text("still here"))])
        #expect(server.connectionCount == 1)
    }

    @Test func missingCertificateFileIsATypedError() throws {
        #expect(throws: TransportError.self) {
            try startEchoServer(
                tls: TLSServerConfiguration(certificateFile: "/nonexistent/cert.pem", privateKeyFile: "/nonexistent/k"))
        }
    }
}
