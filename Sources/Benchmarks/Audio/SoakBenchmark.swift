import BenchmarkSupport
import ClientAudio
import Crypto
import Dispatch
import Foundation
import Platform
import RoomClient
import RoomProtocol
import RoomTokens
import RoomTransport
import ServerBenchmarks
import Synchronization
import WebSocket

/// `clubroom bench soak`: a room of 200 listeners against a real `clubroom serve` in a process of its own, for a
/// given time, with audio, loss and churn. A speaker (a `clubroom bot` sending a tone as Opus) talks the whole
/// time; 40 of the listeners hear it as `clubroom join` does (a session and the client's media: SRTP over UDP,
/// jitter buffer, decoder, FEC and concealment), each behind a relay that loses 2% of the server's audio
/// packets; the others hold their WebSocket. Every 10 s 2% of the listeners drop their connection and join
/// again, and a host moderates all the time (moves a listener onto the stage and back, invites another, sets the
/// topic, chats), within the server's rate limit. A `clubroom bot` in a process of its own listens too (over
/// UDP, unimpaired), as the client whose memory is measured. Prints the server's and that client's resident
/// memory and open descriptors after a warm-up and at the end, one line a minute on the way, what the listeners
/// heard, and whether the server and the client are still running.
public enum SoakBenchmark {
    static let listeners = 200
    /// Listeners that receive the audio over UDP through a lossy relay (the first ones); the rest hold only their
    /// WebSocket, which keeps the bench's own CPU within a shared machine's.
    static let audioListeners = 40
    /// The share of the server's audio packets each relay drops.
    static let lossPercent = 2.0
    /// Listeners whose connection drops (and comes back) each churn round: 2%.
    static let droppedPerRound = 4
    static let churnInterval: Duration = .seconds(10)
    /// Moderation requests a second from the host: half the server's sustained rate.
    static let moderationInterval: Duration = .milliseconds(200)
    /// Time for the room to settle before the start figures are read.
    static let warmUp: Duration = .seconds(20)

    public static func run(minutes: Int) throws -> BenchmarkReport {
        let folder = try ServerFolder(prefix: "clubroom-soak")
        defer { folder.remove() }
        let issuer = folder.issuer
        let server = try ServerChild(binary: "/proc/self/exe", arguments: folder.serveArguments)
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
        let heard = HeardTotals()
        func connect(_ index: Int) -> Listener? {
            if index < audioListeners {
                do {
                    let listener = try AudioListener(
                        url: url, token: tokens[index], identity: "listener-\(index)",
                        link: LinkImpairment(lossPercent: lossPercent, seed: UInt64(index) &+ 1))
                    return .audio(listener)
                } catch {
                    failedJoins.add(1, ordering: .relaxed)
                    return nil
                }
            }
            var headers = HTTPHeaders()
            headers.add("Authorization", "Bearer \(tokens[index])")
            do {
                return .webSocket(
                    try WebSocketClient.connect(
                        to: url, headers: headers, options: options, loop: loops[index % loops.count],
                        handler: WebSocketClient.Handler()))
            } catch {
                failedJoins.add(1, ordering: .relaxed)
                return nil
            }
        }
        func disconnect(_ listener: Listener?) {
            switch listener {
            case .audio(let audio)?: heard.add(audio.finish())
            case .webSocket(let client)?: client.close(code: .goingAway, reason: "")
            case nil: break
            }
        }

        // The speaker: a bot in its own process sending a tone as Opus the whole time (a bot unmutes itself on
        // stage).
        let speaker = try BotChild(["bot", url, "--token", try token("soak-speaker", role: "speaker"), "--tone", "330"])
        defer { speaker.leave() }
        var crowd: [Listener?] = (0..<listeners).map { connect($0) }

        // The measured client: a bot in its own process.
        let bot = try BotChild(["bot", url, "--token", try token("soak-bot", role: "audience")])
        defer { bot.leave() }

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
        startThread(named: "bench-moderate") {
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
                MonotonicClock.sleep(microseconds: moderationInterval.inMicroseconds)
            }
        }

        let started = ContinuousClock.now
        var round = 0
        func churn() {
            for offset in 0..<droppedPerRound {
                let index = (round * droppedPerRound + offset) % listeners
                disconnect(crowd[index])
                crowd[index] = connect(index)
            }
            round += 1
        }
        var nextChurn = started + churnInterval
        var nextLine = started + warmUp + .seconds(60)
        var startServer = (rss: 0.0, descriptors: 0)
        func wait(until deadline: ContinuousClock.Instant) {
            while ContinuousClock.now < deadline, server.process.isRunning {
                usleep(200_000)
                if ContinuousClock.now >= nextChurn {
                    churn()
                    nextChurn = nextChurn + churnInterval
                }
                if startServer.rss > 0, ContinuousClock.now >= nextLine {
                    let minute = (nextLine - started - warmUp).components.seconds / 60
                    let rss = server.residentMegabytes()
                    progress(
                        "soak: minute \(minute): server RSS \(String(format: "%.2f", rss)) MB "
                            + "(\(String(format: "%+.2f", (rss - startServer.rss) / startServer.rss * 100))%), "
                            + "\(Self.descriptors(of: server.process)) fds; client RSS "
                            + "\(String(format: "%.2f", Self.residentMegabytes(of: bot.process))) MB, "
                            + "\(Self.descriptors(of: bot.process)) fds")
                    nextLine = nextLine + .seconds(60)
                }
            }
        }
        wait(until: started + warmUp)
        startServer = (rss: server.residentMegabytes(), descriptors: Self.descriptors(of: server.process))
        let startBot = (rss: Self.residentMegabytes(of: bot.process), descriptors: Self.descriptors(of: bot.process))
        // What the listeners heard is counted from here, after the warm-up.
        let heardAtStart = crowd.reduce(heard.snapshot()) { total, listener in
            if case .audio(let audio)? = listener { return total.adding(audio.current()) }
            return total
        }
        let measuredFrom = ContinuousClock.now
        progress(
            "soak: start: server RSS \(String(format: "%.2f", startServer.rss)) MB, \(startServer.descriptors) fds; "
                + "client RSS \(String(format: "%.2f", startBot.rss)) MB, \(startBot.descriptors) fds")
        wait(until: started + warmUp + .seconds(Int64(minutes) * 60))
        let endServer = (rss: server.residentMegabytes(), descriptors: Self.descriptors(of: server.process))
        let endBot = (rss: Self.residentMegabytes(of: bot.process), descriptors: Self.descriptors(of: bot.process))
        let measuredSeconds = Double((ContinuousClock.now - measuredFrom).components.seconds)
        running.store(false, ordering: .relaxed)
        let serverAlive = server.process.isRunning
        let botAlive = bot.process.isRunning
        let speakerAlive = speaker.process.isRunning
        var heardAtEnd = heard.snapshot()
        for listener in crowd {
            if case .audio(let audio)? = listener { heardAtEnd = heardAtEnd.adding(audio.current()) }
        }
        for listener in crowd { disconnect(listener) }
        let audio = heardAtEnd.subtracting(heardAtStart)
        // Frames the audio listeners connected at any moment should have had: 50 a second each.
        let expectedFrames = measuredSeconds * 50 * Double(audioListeners)

        func growth(_ start: Double, _ end: Double) -> Double { start > 0 ? (end - start) / start * 100 : 0 }
        let rows: [BenchmarkReport.Row] = [
            .init("server crashed", serverAlive ? 0 : 1, "crashes", target: 0),
            .init("client crashed", botAlive ? 0 : 1, "crashes", target: 0),
            .init("speaker crashed", speakerAlive ? 0 : 1, "crashes", target: 0),
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
            // Each audio listener hears the speaker the whole time but for its churn (a few seconds an hour) and
            // what the relay drops: at least 90% of 50 frames a second reach its decoder.
            .init(
                "audio frames received by the \(audioListeners) audio listeners", Double(audio.received), "frames",
                target: (expectedFrames * 0.9).rounded(), goal: .atLeast),
            .init("audio packets the relays dropped", Double(audio.relayDropped), "of \(audio.relaySeen)"),
            .init("audio packets rebuilt by FEC", Double(audio.recoveredByFEC), "packets"),
            .init("audio frames concealed", Double(audio.concealed), "frames"),
        ]
        var notes = [
            "\(minutes) min after a \(warmUp.components.seconds) s warm-up; \(listeners) listeners (\(audioListeners) of them hearing the audio), "
                + "\(droppedPerRound) (2%) dropped and joined again every \(churnInterval.components.seconds) s; "
                + "a host moving, inviting, setting the topic and chatting 5 times a second; the client measured is a "
                + "'clubroom bot' listening in a process of its own (UDP, no loss); a 'clubroom bot' speaker sends a "
                + "330 Hz tone as Opus all the time; \(audioListeners) listeners receive it over UDP/SRTP with the "
                + "client's media, each behind a relay dropping \(Int(lossPercent))% of the server's audio packets",
            "\(failedJoins.load(ordering: .relaxed)) joins failed",
        ]
        if let problem = server.problem { notes.append("the server logged: \(problem)") }
        #if DEBUG
        notes.append("debug build: build with 'swift build -c release' for real figures")
        #endif
        return BenchmarkReport(name: "soak", rows: rows, notes: notes)
    }

    /// The bench's progress lines, on standard error (the report goes to standard output at the end).
    static func progress(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// A listener of the crowd.
    enum Listener {
        case audio(AudioListener)
        case webSocket(WebSocketClient)
    }

    /// What audio listeners heard, added up.
    struct Heard: Sendable {
        var received = 0
        var recoveredByFEC = 0
        var concealed = 0
        var relaySeen = 0
        var relayDropped = 0

        func adding(_ other: Heard) -> Heard {
            Heard(
                received: received + other.received, recoveredByFEC: recoveredByFEC + other.recoveredByFEC,
                concealed: concealed + other.concealed, relaySeen: relaySeen + other.relaySeen,
                relayDropped: relayDropped + other.relayDropped)
        }

        func subtracting(_ other: Heard) -> Heard {
            Heard(
                received: received - other.received, recoveredByFEC: recoveredByFEC - other.recoveredByFEC,
                concealed: concealed - other.concealed, relaySeen: relaySeen - other.relaySeen,
                relayDropped: relayDropped - other.relayDropped)
        }
    }

    /// What listeners that have left heard.
    final class HeardTotals: Sendable {
        private let total = Mutex(Heard())
        func add(_ heard: Heard) { total.withLock { $0 = $0.adding(heard) } }
        func snapshot() -> Heard { total.withLock { $0 } }
    }

    /// A listener as `clubroom join` hears a room, without devices: a session and the client's media (SRTP over
    /// UDP, jitter buffer, decoder, mix), behind a relay that impairs what the server sends it.
    final class AudioListener: Sendable {
        private let client: BenchClient
        private let mediaSlot: ClientMediaSlot
        /// The newest statistics of its media engine (cumulative since the engine started).
        private let latest = Locked(Heard())

        init(url: String, token: String, identity: String, link impairment: LinkImpairment) throws {
            let latest = latest
            let mediaSlot = ClientMediaSlot(
                options: ClientMedia.Options(),
                onEvent: { event in
                    guard case .stats(_, let speakers, _) = event else { return }
                    latest.withLock { heard in
                        heard.received = speakers.reduce(0) { $0 + $1.received }
                        heard.recoveredByFEC = speakers.reduce(0) { $0 + $1.recoveredByFEC }
                        heard.concealed = speakers.reduce(0) { $0 + $1.concealed }
                    }
                }, onFailure: { _ in })
            self.mediaSlot = mediaSlot
            client = try BenchClient(
                url: url, token: token, identity: identity, relay: impairment, keepsRecords: false
            ) { mediaSlot.handle($0) }
            mediaSlot.attach(client.session.mediaChannel)
            try client.join()
        }

        /// What it heard so far, with its relay's counts.
        func current() -> Heard {
            var heard = latest.withLock { $0 }
            if let counts = client.relay?.counts {
                heard.relaySeen = counts.seen
                heard.relayDropped = counts.dropped
            }
            return heard
        }

        /// Leaves the room and returns what it heard.
        func finish() -> Heard {
            let heard = current()
            mediaSlot.close()
            client.close()
            return heard
        }
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

/// A `clubroom bot` in a process of its own (this executable), its output discarded; it leaves the room when its
/// input closes.
private struct BotChild {
    let process = Process()
    private let input = Pipe()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Closes its input, so it leaves the room, and waits for it to exit.
    func leave() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
