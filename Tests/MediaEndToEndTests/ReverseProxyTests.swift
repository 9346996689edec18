import Foundation
import RoomTesting
import Testing

/// The package's root, found from this file's place in it.
private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// nginx from Debian in front of `clubroom serve`, as `docs/deploy.md` sets it up: the shipped server block
/// (`contrib/nginx-clubroom.conf`) on a free port, terminating TLS with a certificate made for the test, run as an
/// unprivileged configuration of the test's own (its own prefix, pid file, logs and temp folders).
final class Proxy {
    let directory: URL
    let port: Int
    let certificate: String
    private let process = Process()
    private let errors = TextBox()

    /// The nginx binary: on PATH, or where Debian puts it.
    static var binary: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"] {
            let candidate = folder + "/nginx"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    init(nginx: String, upstreamPort: Int, in directory: URL) throws {
        self.directory = directory
        let temp = directory.appendingPathComponent("nginx-temp")
        try FileManager.default.createDirectory(at: temp, withIntermediateDirectories: true)
        certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout", key,
            "-out", certificate, "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else { throw TestFailure("openssl could not make a certificate") }

        // The shipped block, pointed at this test's server, port and certificate.
        var block = try String(
            contentsOf: packageRoot.appendingPathComponent("contrib/nginx-clubroom.conf"), encoding: .utf8)
        port = try Self.freePort()
        let replacements = [
            ("listen 443 ssl;", "listen 127.0.0.1:\(port) ssl;"),
            ("proxy_pass http://127.0.0.1:7480;", "proxy_pass http://127.0.0.1:\(upstreamPort);"),
            ("/etc/letsencrypt/live/rooms.example.org/fullchain.pem", certificate),
            ("/etc/letsencrypt/live/rooms.example.org/privkey.pem", key),
        ]
        for (from, to) in replacements {
            guard block.contains(from) else { throw TestFailure("contrib/nginx-clubroom.conf has no \(from)") }
            block = block.replacingOccurrences(of: from, with: to)
        }
        let root = directory.path
        let configuration = """
            worker_processes 1;
            daemon off;
            pid \(root)/nginx.pid;
            error_log \(root)/nginx-error.log info;
            events { worker_connections 256; }
            http {
                access_log \(root)/nginx-access.log;
                client_body_temp_path \(temp.path)/body;
                proxy_temp_path \(temp.path)/proxy;
                fastcgi_temp_path \(temp.path)/fastcgi;
                uwsgi_temp_path \(temp.path)/uwsgi;
                scgi_temp_path \(temp.path)/scgi;
            \(block)
            }
            """
        let file = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-p", root + "/", "-e", root + "/nginx-error.log", "-c", file.path]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        err.fileHandleForReading.readToEnd { [errors] in errors.append($0) }
        let deadline = Date().addingTimeInterval(10)
        while !Self.accepts(port), Date() < deadline, process.isRunning { usleep(50_000) }
        guard Self.accepts(port) else {
            stop()
            let log = (try? String(contentsOfFile: root + "/nginx-error.log", encoding: .utf8)) ?? ""
            throw TestFailure("nginx did not start: \(errors.text) \(log)")
        }
    }

    /// The access log: what nginx saw of each request.
    var accessLog: String { (try? String(contentsOfFile: directory.path + "/nginx-access.log", encoding: .utf8)) ?? "" }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// A port nothing listens on now (asked of the kernel, then let go).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw TestFailure("no free port") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

@Suite(.ownThread, .serialized) struct ReverseProxyTests {
    /// Through nginx with TLS: a listener hears a speaker with its audio straight over UDP, another with UDP
    /// blocked hears it over the WebSocket through the proxy, and the lobby lists the room and hears of a new one.
    @Test(.timeLimit(.minutes(2))) func aClientJoinsThroughTheProxyAndHearsASpeaker() throws {
        guard let nginx = Proxy.binary else {
            Issue.record("nginx is not installed; this test needs it (make test-deps installs it)")
            return
        }
        let room = try TestServer(name: "proxy")
        let upstream = try #require(Int(room.url.split(separator: ":")[2].prefix(while: \.isNumber)))
        let proxy = try Proxy(nginx: nginx, upstreamPort: upstream, in: room.directory)
        defer { proxy.stop() }
        let trust = ["SSL_CERT_FILE": proxy.certificate, "XDG_STATE_HOME": room.path("state")]
        let secure = "wss://localhost:\(proxy.port)/rooms/stage"

        let speaker = try room.bot("ana", role: "host", ["--tone", "440"])
        #expect(speaker.waitFor("\"joined\""))
        let direct = try RunningProcess(
            ["bot", secure, "--token", try room.token("eli", role: "audience"), "--record", room.path("udp.wav")],
            directory: room.directory, environment: trust)
        let tunnelled = try RunningProcess(
            [
                "bot", secure, "--token", try room.token("fay", role: "audience"), "--record", room.path("ws.wav"),
                "--block-udp",
            ], directory: room.directory, environment: trust)
        #expect(
            direct.waitFor("{\"event\":\"media_path\",\"path\":\"udp\"}"),
            "\(direct.standardOutput)\(direct.standardError)")
        #expect(tunnelled.waitFor("{\"event\":\"media_path\",\"path\":\"websocket\"}"), "\(tunnelled.standardOutput)")
        #expect(direct.waitUntil(seconds: 20, receivedAudio), "\(direct.standardOutput)\(direct.standardError)")
        #expect(
            tunnelled.waitUntil(seconds: 20, receivedAudio), "\(tunnelled.standardOutput)\(tunnelled.standardError)")

        // The lobby through the proxy: the room is listed, and a room that starts is announced.
        let link = try RunningProcess(
            ["invite", "wss://localhost:\(proxy.port)", "--secret-file", room.path("secret")], directory: room.directory
        )
        link.process.waitUntilExit()
        usleep(50_000)
        let serverLink = link.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(serverLink.hasPrefix("wss://localhost:\(proxy.port)/rooms#invite="))
        let lobby = try RunningProcess(
            ["join", serverLink, "--plain", "--name", "Gus", "--output", "null"], directory: room.directory,
            environment: trust)
        // The lobby names the room's listeners, in the order they came (the two bots start together).
        #expect(lobby.waitFor("1. stage: 2 listening ("), "\(lobby.standardOutput)\(lobby.standardError)")
        #expect(
            ["eli and fay", "fay and eli"].contains {
                lobby.standardOutput.contains("1. stage: 2 listening (\($0)); on stage: ana (host)")
            }, "\(lobby.standardOutput)\(lobby.standardError)")
        let other = try RunningProcess(
            ["bot", "wss://localhost:\(proxy.port)/rooms/jazz", "--token", try jazzToken(room)],
            directory: room.directory, environment: trust)
        #expect(lobby.waitFor("Room started: jazz."), "\(lobby.standardOutput)")

        usleep(2_000_000)
        // The listeners leave while the speaker still speaks, all at once: their recordings end in the tone.
        lobby.send("/quit")
        RunningProcess.finish([direct, tunnelled, other, lobby])
        speaker.finish()
        let log = room.stop()
        for (name, bot) in [("eli", direct), ("fay", tunnelled)] {
            #expect(
                bot.process.terminationReason == .exit && bot.process.terminationStatus == 0,
                "\(name) ended with \(bot.process.terminationStatus):\n\(bot.standardError)\n\(bot.standardOutput.suffix(2000))"
            )
        }
        for (name, path) in [("UDP", "udp.wav"), ("WebSocket", "ws.wav")] {
            let audio = try recording(room.path(path), from: 0, to: 60)
            let heard = try #require(
                toneFromFirstSound(audio, hertz: 440, samples: 48_000),
                "nothing heard over \(name) in \(audio.count) samples")
            #expect(heard.ratio > 1000, "over \(name), 440 Hz against its neighbours: \(heard.ratio)")
        }
        #expect(counter("websocket_out", in: log) > 50)
        // The clients came through nginx (TLS ended there), and no token reached its log: they go in headers.
        let access = proxy.accessLog
        #expect(access.contains("GET /rooms/stage HTTP/1.1\" 101"), "\(access)")
        #expect(access.contains("GET /rooms HTTP/1.1\" 101"), "\(access)")
        #expect(!access.contains("eyJ"), "a token reached the proxy's log:\n\(access)")
    }

    func jazzToken(_ room: TestServer) throws -> String {
        let minting = try RunningProcess(
            [
                "token", "--room", "jazz", "--identity", "bo", "--role", "host", "--secret-file", room.path("secret"),
            ], directory: room.directory)
        minting.process.waitUntilExit()
        usleep(50_000)
        return minting.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The shipped systemd unit starts the server as it says (its options exist and work together), and
    /// `systemd-analyze` finds nothing wrong with it but the binary's place.
    @Test(.timeLimit(.minutes(1))) func theSystemdUnitsCommandStartsAServer() throws {
        let unit = try String(
            contentsOf: packageRoot.appendingPathComponent("contrib/clubroom.service"), encoding: .utf8)
        let lines = unit.split(separator: "\n").map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("ExecStart=") }) else {
            Issue.record("no ExecStart")
            return
        }
        var command = ""
        for line in lines[start...] {
            command += line.hasSuffix("\\") ? String(line.dropLast()) + " " : line
            if !line.hasSuffix("\\") { break }
        }
        let words = command.dropFirst("ExecStart=".count).split(whereSeparator: \.isWhitespace).map(String.init)
        #expect(words.first == "/usr/local/bin/clubroom" && words.dropFirst().first == "serve")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-unit-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The same options, on free ports, in a folder of the test's own, and an address that resolves here.
        let arguments = Array(words.dropFirst()).map { word -> String in
            word.replacingOccurrences(of: "127.0.0.1:7480", with: "127.0.0.1:0")
                .replacingOccurrences(of: "0.0.0.0:7481", with: "0.0.0.0:0")
                .replacingOccurrences(of: "/var/lib/clubroom", with: directory.path)
                .replacingOccurrences(of: "rooms.example.org", with: "localhost")
        }
        let server = try RunningProcess(arguments, directory: directory)
        #expect(server.waitFor("listening on ws://127.0.0.1:", inErrors: true), "\(server.standardError)")
        server.terminate()
        #expect(server.standardError.contains("stopped"))
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") {
            let copy = directory.appendingPathComponent("clubroom.service")
            try unit.write(to: copy, atomically: true, encoding: .utf8)
            let verify = Process()
            verify.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
            verify.arguments = ["verify", copy.path]
            let output = Pipe()
            verify.standardError = output
            verify.standardOutput = output
            try verify.run()
            verify.waitUntilExit()
            let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let problems = said.split(separator: "\n").filter {
                !$0.contains("/usr/local/bin/clubroom is not executable")
            }
            #expect(problems.isEmpty, "\(said)")
        }
    }
}
