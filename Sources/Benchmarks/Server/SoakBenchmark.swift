import BenchmarkSupport
import Crypto
import Dispatch
import Foundation
import RoomProtocol
import RoomTransport
import Synchronization

/// `clubroom bench soak`: a room of 200 listeners against a real `clubroom serve` in a process of its own, for a
/// given time, with churn: every 10 s 2% of the listeners drop their connection and join again, and a host
/// moderates all the time (moves a listener onto the stage and back, invites another, sets the topic, chats), within the
/// server's rate limit. A `clubroom bot` in a process of its own listens too, as the client whose memory is
/// measured. Prints the server's and that client's resident memory and open descriptors after a warm-up and at
/// the end, and whether the server is still running.
public enum SoakBenchmark {
    static let listeners = 200
    /// Listeners whose connection drops (and comes back) each churn round: 2%.
    static let droppedPerRound = 4
    static let churnInterval: Duration = .seconds(10)
    /// Moderation requests a second from the host: half the server's sustained rate.
    static let moderationInterval: Duration = .milliseconds(200)
    /// Time for the room to settle before the start figures are read.
    static let warmUp: Duration = .seconds(20)

    public static func run(minutes: Int) throws -> BenchmarkReport {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-soak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let secretFile = folder.appendingPathComponent("secret").path
        let issuer = TokenIssuer(secret: try SecretFile.loadOrCreate(at: secretFile))
        let server = try ServerChild(
            binary: "/proc/self/exe",
            arguments: [
                "serve", "--listen", "127.0.0.1:0", "--data", folder.appendingPathComponent("data").path,
                "--secret-file", secretFile,
            ])
        defer { server.stop() }
        let now = Int64(Date().timeIntervalSince1970)
        let expiry = now + Int64(minutes) * 60 + 3600
        func token(_ identity: String, role: String) throws -> String {
            try issuer.issue(
                TokenClaims(
                    subject: identity, name: identity, room: "soak", role: role, expiresAt: expiry,
                    notBefore: now - 60))
        }
        let url = "ws://127.0.0.1:\(server.port)/rooms/soak"
        var options = WebSocketOptions()
        options.maxMessageSize = ControlLimits.maxServerMessageBytes
        options.handshakeTimeout = .seconds(30)
        let loops = try (0..<2).map { _ in try EventLoop(name: "soak-crowd") }
        defer { for loop in loops { loop.shutdown() } }
        let tokens = try (0..<listeners).map { try token("listener-\($0)", role: "audience") }
        let failedJoins = Atomic<Int>(0)
        func connect(_ index: Int) -> WebSocketClient? {
            var headers = HTTPHeaders()
            headers.add("Authorization", "Bearer \(tokens[index])")
            do {
                return try WebSocketClient.connect(
                    to: url, headers: headers, options: options, loop: loops[index % loops.count],
                    handler: WebSocketClient.Handler())
            } catch {
                failedJoins.add(1, ordering: .relaxed)
                return nil
            }
        }
        var crowd: [WebSocketClient?] = (0..<listeners).map { connect($0) }

        // The measured client: a bot in its own process.
        let bot = Process()
        bot.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        bot.arguments = ["bot", url, "--token", try token("soak-bot", role: "audience")]
        let botInput = Pipe()
        bot.standardInput = botInput
        bot.standardOutput = FileHandle.nullDevice
        bot.standardError = FileHandle.nullDevice
        try bot.run()
        defer {
            try? botInput.fileHandleForWriting.close()
            bot.waitUntilExit()
        }

        // The host, moderating.
        let hostLoop = try EventLoop(name: "soak-host")
        defer { hostLoop.shutdown() }
        var hostHeaders = HTTPHeaders()
        hostHeaders.add("Authorization", "Bearer \(try token("host", role: "host"))")
        let refusals = Atomic<Int>(0)
        let host = try WebSocketClient.connect(
            to: url, headers: hostHeaders, options: options, loop: hostLoop,
            handler: WebSocketClient.Handler(onMessage: { payload in
                if case .text(let text) = payload, text.hasPrefix(#"{"type":"error""#) {
                    refusals.add(1, ordering: .relaxed)
                }
            }))
        defer { host.close() }
        let running = Atomic<Bool>(true)
        let sent = Atomic<Int>(0)
        let moderator = Thread {
            var step = 0
            while running.load(ordering: .relaxed) {
                let target = "listener-\((step / 4) % listeners)"
                let request: String
                switch step % 4 {
                case 0: request = #"{"type":"set_role","peer":"\#(target)","role":"speaker"}"#
                case 1:
                    let invited = "listener-\((step / 4 + listeners / 2) % listeners)"
                    request = #"{"type":"invite","peer":"\#(invited)"}"#
                case 2: request = #"{"type":"set_role","peer":"\#(target)","role":"audience"}"#
                default:
                    request =
                        step % 8 == 3
                        ? #"{"type":"set_topic","text":"soak round \#(step)"}"#
                        : #"{"type":"chat","text":"soak \#(step)"}"#
                }
                host.send(text: request)
                sent.add(1, ordering: .relaxed)
                step += 1
                usleep(UInt32(moderationInterval.components.attoseconds / 1_000_000_000_000))
            }
        }
        moderator.start()

        let started = ContinuousClock.now
        var round = 0
        func churn() {
            for offset in 0..<droppedPerRound {
                let index = (round * droppedPerRound + offset) % listeners
                crowd[index]?.close(code: .goingAway, reason: "")
                crowd[index] = connect(index)
            }
            round += 1
        }
        var nextChurn = started + churnInterval
        func wait(until deadline: ContinuousClock.Instant) {
            while ContinuousClock.now < deadline, server.process.isRunning {
                usleep(200_000)
                if ContinuousClock.now >= nextChurn {
                    churn()
                    nextChurn = nextChurn + churnInterval
                }
            }
        }
        wait(until: started + warmUp)
        let startServer = (rss: server.residentMegabytes(), descriptors: Self.descriptors(of: server.process))
        let startBot = (rss: Self.residentMegabytes(of: bot), descriptors: Self.descriptors(of: bot))
        wait(until: started + warmUp + .seconds(Int64(minutes) * 60))
        let endServer = (rss: server.residentMegabytes(), descriptors: Self.descriptors(of: server.process))
        let endBot = (rss: Self.residentMegabytes(of: bot), descriptors: Self.descriptors(of: bot))
        running.store(false, ordering: .relaxed)
        moderator.cancel()
        let serverAlive = server.process.isRunning
        let botAlive = bot.isRunning
        for client in crowd { client?.close() }

        func growth(_ start: Double, _ end: Double) -> Double { start > 0 ? (end - start) / start * 100 : 0 }
        let rows: [BenchmarkReport.Row] = [
            .init("server crashed", serverAlive ? 0 : 1, "crashes", target: 0),
            .init("client crashed", botAlive ? 0 : 1, "crashes", target: 0),
            .init("server RSS after warm-up", startServer.rss, "MB"),
            .init("server RSS at the end", endServer.rss, "MB"),
            .init("server RSS growth", growth(startServer.rss, endServer.rss), "%", target: 5),
            .init("server descriptors after warm-up", Double(startServer.descriptors), "fds"),
            .init(
                "server descriptors at the end", Double(endServer.descriptors), "fds",
                target: Double(startServer.descriptors + droppedPerRound)),
            .init("client RSS after warm-up", startBot.rss, "MB"),
            .init("client RSS at the end", endBot.rss, "MB"),
            .init("client RSS growth", growth(startBot.rss, endBot.rss), "%", target: 5),
            .init("client descriptors after warm-up", Double(startBot.descriptors), "fds"),
            .init(
                "client descriptors at the end", Double(endBot.descriptors), "fds", target: Double(startBot.descriptors)
            ),
            .init("moderation requests sent", Double(sent.load(ordering: .relaxed)), "requests"),
            .init("listener reconnections", Double(round * droppedPerRound), "joins"),
            .init("requests refused", Double(refusals.load(ordering: .relaxed)), "requests"),
        ]
        var notes = [
            "\(minutes) min after a \(warmUp.components.seconds) s warm-up; \(listeners) listeners on WebSocket, "
                + "\(droppedPerRound) (2%) dropped and joined again every \(churnInterval.components.seconds) s; "
                + "a host moving, inviting, setting the topic and chatting 5 times a second; the client measured is a "
                + "'clubroom bot' listening in a process of its own; the media plane carries no audio in this run",
            "\(failedJoins.load(ordering: .relaxed)) joins failed",
        ]
        if let problem = server.problem { notes.append("the server logged: \(problem)") }
        #if DEBUG
        notes.append("debug build: build with 'swift build -c release' for real figures")
        #endif
        return BenchmarkReport(name: "soak", rows: rows, notes: notes)
    }

    /// Open descriptors of a process, from /proc.
    static func descriptors(of process: Process) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd"))?.count ?? 0
    }

    /// A process's resident memory, in megabytes (MiB).
    static func residentMegabytes(of process: Process) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }
}
