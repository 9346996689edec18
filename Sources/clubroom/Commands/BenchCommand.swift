import Arguments
import AudioBenchmarks
import BenchmarkSupport
import ClubroomResources
import ClusterBenchmarks
import DirectoryBenchmarks
import Foundation
import RoomCore
import ServerBenchmarks
import StoreBenchmarks
import StreamBenchmarks
import UIBenchmarks

/// `clubroom bench`: the benchmark suites.
enum BenchCommand: ClubroomCommand {
    /// The suites, in the order help lists them.
    enum Suite: String, CaseIterable {
        case store, join, departures, soak, fanout, latency, loss, cpu, ui, highlight, directory
        case qualityPath = "quality-path"
        case requests, failover, checkpoint, faults, record, stream

        /// The options that apply only to this suite.
        var ownOptions: [Option] {
            switch self {
            case .join: return [clients.option]
            case .departures: return [clients.option, serverBinary.option]
            case .soak: return [minutes.option]
            case .fanout: return [speakers.option, listeners.option, seconds.option, nodes.option]
            case .latency: return [seconds.option, AudioBench.seed.option, AudioBench.pulse.option]
            case .loss: return [seconds.option, AudioBench.seed.option, AudioBench.runs.option]
            case .cpu, .record, .stream: return [seconds.option]
            case .highlight: return [seconds.option, AudioBench.runs.option]
            case .qualityPath: return AudioBench.qualityPathOptions
            case .directory: return [rooms.option, watchers.option]
            case .requests: return [seconds.option]
            case .failover: return [kills.option]
            case .faults: return [minutes.option]
            case .store, .ui, .checkpoint: return []
            }
        }
    }

    static let declaration = Command(
        name: "bench", abstract: "Measure performance.",
        discussion: """
            Runs one benchmark suite and prints a table, or JSON with --json. Build with 'swift build -c release' \
            first: debug builds are many times slower. Do not run benchmarks while the machine is busy.

            store: the room state store (10,000 joins, hand raises, role changes). join: N clients joining a \
            server. departures: N listeners leaving a room at once (silent, then closing) while a host sends chat; \
            the server's memory and CPU, and the chat round trip. soak: a room of 200 listeners for M minutes with \
            a speaker sending audio all the time, 40 listeners hearing it over UDP with 2% of its packets lost, \
            2% of the listeners dropping and joining again every 10 s and a host moderating; the server's and a \
            client's memory and open descriptors at the start, each minute and at the end. fanout: the server forwarding audio from S speakers to L listeners; with --nodes N, beside the same \
            through N cluster nodes' forwarders and relays on 127.0.0.2 onward: capacity per CPU-second and the \
            relay hop. latency: mouth-to-ear \
            delay through a room server. loss: PESQ-WB of natural speech through a room server at 0, 5, 10 and 20% \
            random loss and 10% bursty loss, RFC 2198 redundancy on and off, beside libopus alone; delay and \
            bitrate (needs python3 with pesq and numpy). cpu: CPU time per minute of audio of the client, 'clubroom join', \
            against a server and three speaking bots. ui: rendering a 10,000-peer room. quality-path: sends a WAV \
            file from one client through a room server to another, and through libopus alone, for bench/quality. \
            directory: R live rooms and W lobbies watching the list; how fast a room's change reaches them and the \
            whole list is served, and the server's CPU per change. requests: a cluster of two nodes and its own \
            redis-server; a request from a client of the node that does not own the room, to the event it causes, \
            beside the same through a server alone. failover: a cluster of three nodes; the room's owner killed N \
            times: the time to a new owner, and events lost or repeated. checkpoint: a cluster room of 1,000 and \
            10,000 peers: its checkpoint's size and cost, and a decision taken on a copy beside one in place. \
            faults: three cluster nodes, a Redis with its append-only file and a dozen bots making requests, under \
            one fault at a time for M minutes (kill -9 and SIGSTOP of a node or of Redis, a node cut from Redis): \
            requests refused but applied, duplicates, ghosts, and the time to serve again after each fault kind. \
            record: a recorder in a room of three tone speakers: its CPU against libopus alone, the server's \
            forwarding with and without it, and its file against what a listener heard. stream: the live \
            outputs against an icecast2, an nginx-rtmp and an nginx serving HLS of its own, read back by ffmpeg: \
            the delay from a click to the reader, the CPU of each output against the Ogg Opus file alone (each for \
            T seconds, at most 30), and whether anything is lost: the three outputs and the file fed together for \
            T seconds, every frame offered against delivered and each stream's length read back against the run's.
            """,
        positionals: [
            Positional("suite", type: .choice(Suite.allCases.map(\.rawValue)), help: "The suite to run.")
        ],
        options: [
            json.option, clients.option, serverBinary.option, minutes.option, speakers.option, listeners.option,
            nodes.option, seconds.option, kills.option, rooms.option, watchers.option,
        ] + AudioBench.options)

    static let json = TypedOption.flag("json", help: "Print the results as JSON.")
    static let clients = TypedOption.integer(
        "clients", placeholder: "N", in: 1...100_000, default: 1000, help: "join, departures: number of clients.")
    static let serverBinary = TypedOption.path(
        "server-binary", placeholder: "FILE",
        help: "departures: the clubroom binary to run as the server (default: this one), to compare builds.")
    /// How long the suites that run for minutes run when `--minutes` is left out, said once for the help and the
    /// run.
    static let defaultMinutes: [Suite: Int] = [.soak: 60, .faults: 5]
    /// How long the suites whose length is their own measure when `--seconds` is left out (the others take
    /// `seconds`' default), said once for the help and the run.
    static let defaultSeconds: [Suite: Int] = [.latency: 20, .cpu: 60, .highlight: 20, .loss: 6]
    /// No default of its own: each suite that takes it has its own (`defaultMinutes`).
    static let minutes = TypedOption.integer(
        "minutes", placeholder: "M", in: 1...1440,
        help: "soak: how long to run, after a 20 s warm-up (default \(defaultMinutes[.soak]!)). faults: how long to go "
            + "on with faults (default \(defaultMinutes[.faults]!)).")
    static let speakers = TypedOption.integer(
        "speakers", placeholder: "S", in: 1...100, default: 3, help: "fanout: number of speakers.")
    static let listeners = TypedOption.integer(
        "listeners", placeholder: "L", in: 1...100_000, default: 1000, help: "fanout: number of listeners.")
    static let nodes = TypedOption.integer(
        "nodes", placeholder: "N", in: 1...16, default: 1,
        help: "fanout: 1 measures one server; 2 or more compares it with that many cluster nodes.")
    /// The default is fanout's and requests'; latency, cpu and highlight take their own (`defaultSeconds`).
    static let seconds = TypedOption.integer(
        "seconds", placeholder: "T", in: 1...3600, default: 10,
        help: "fanout, latency, loss, cpu, highlight, requests, record, stream: how long to measure (latency: "
            + "\(defaultSeconds[.latency]!) per condition, loss: \(defaultSeconds[.loss]!) of speech per run, cpu: "
            + "\(defaultSeconds[.cpu]!) per client, highlight: \(defaultSeconds[.highlight]!) per run).")

    /// `--minutes` for `suite`: as given, else the suite's own default.
    static func minutes(_ arguments: ParsedArguments, for suite: Suite) -> Int {
        arguments[minutes] ?? defaultMinutes[suite]!
    }

    /// `--seconds` for a suite with a length of its own: as given, else the suite's own default.
    static func seconds(_ arguments: ParsedArguments, for suite: Suite) -> Int {
        arguments.ifGiven(seconds) ?? defaultSeconds[suite]!
    }
    static let kills = TypedOption.integer(
        "kills", placeholder: "N", in: 1...1000, default: 20, help: "failover: how many times the owner is killed.")
    static let rooms = TypedOption.integer(
        "rooms", placeholder: "R", in: 1...10_000, default: 1000, help: "directory: number of live rooms.")
    static let watchers = TypedOption.integer(
        "watchers", placeholder: "W", in: 1...10_000, default: 1000, help: "directory: number of lobbies watching.")

    /// The run's settings, as given on the command line.
    struct Options: Equatable {
        var suite: Suite
        var json: Bool
        var clients: Int
        var speakers: Int
        var listeners: Int
        var seconds: Int
        /// Everything `latency`, `cpu` and `quality-path` take, as given.
        var arguments: ParsedArguments

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            suite = arguments.choice("suite").flatMap(Suite.init(rawValue:)) ?? .store
            json = arguments[BenchCommand.json]
            clients = arguments[BenchCommand.clients]
            speakers = arguments[BenchCommand.speakers]
            listeners = arguments[BenchCommand.listeners]
            seconds = arguments[BenchCommand.seconds]
            self.arguments = arguments
            let suiteOptions = Set(Suite.allCases.flatMap(\.ownOptions).map(\.name))
            let notApplicable = suiteOptions.subtracting(suite.ownOptions.map(\.name))
            for option in notApplicable.sorted() where arguments.isGiven(option) {
                throw .notApplicable(option: "--\(option)", context: "'bench \(suite.rawValue)'")
            }
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let options = try Options(arguments)
        switch options.suite {
        case .store: return try await runStore(options)
        case .join: return try await runJoin(options)
        case .departures: return try await runDepartures(options)
        case .soak: return try await runSoak(options)
        case .fanout: return try await runFanout(options)
        case .latency: return try await runLatency(options)
        case .loss:
            return BenchCommand.emit(
                try LossBenchmark.report(
                    seconds: seconds(options.arguments, for: .loss), seed: UInt64(options.arguments[AudioBench.seed]),
                    runs: options.arguments[AudioBench.runs]),
                json: options.json)
        case .cpu: return try await runCPU(options)
        case .ui: return try await runUI(options)
        case .highlight: return try AudioBench.runHighlight(options.arguments, json: options.json)
        case .qualityPath: return try AudioBench.runQualityPath(options.arguments)
        case .directory: return try await runDirectory(options)
        case .requests, .failover: return try await runCluster(options)
        case .checkpoint: return try await runCheckpoint(options)
        case .faults: return try await runFaults(options)
        case .record: return try await runRecord(options)
        case .stream:
            let seconds = options.seconds
            return try await printReport(options) { try StreamBenchmark.report(seconds: seconds) }
        }
    }

    static func runRecord(_ options: Options) async throws -> ExitStatus {
        let seconds = options.seconds
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        return try await printReport(options) { try RecordBenchmark.report(executable: executable, seconds: seconds) }
    }

    static func runFaults(_ options: Options) async throws -> ExitStatus {
        let minutes = BenchCommand.minutes(options.arguments, for: .faults)
        return try await printReport(options) {
            try FaultRun.run(minutes: minutes) { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
        }
    }

    static func runDirectory(_ options: Options) async throws -> ExitStatus {
        let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
        warnIfDebugBuild()
        var settings = DirectoryBenchmark.Settings()
        settings.rooms = options.arguments[BenchCommand.rooms]
        settings.watchers = options.arguments[BenchCommand.watchers]
        let chosen = settings
        return try await printReport(options) { try DirectoryBenchmark.run(settings: chosen, roles: roles) }
    }

    static func runCluster(_ options: Options) async throws -> ExitStatus {
        let suite = options.suite
        let seconds = options.seconds
        let kills = options.arguments[BenchCommand.kills]
        return try await printReport(options) {
            suite == .failover
                ? try ClusterBenchmark.runFailover(kills: kills) : try ClusterBenchmark.runRequests(seconds: seconds)
        }
    }

    static func runCheckpoint(_ options: Options) async throws -> ExitStatus {
        try await printReport(options, judged: false) { try CheckpointBenchmark.report() }
    }

    static func runStore(_ options: Options) async throws -> ExitStatus {
        let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
        warnIfDebugBuild()
        let report = StoreBenchmark.run(roles: roles)
        print(options.json ? report.jsonText() : report.tableText())
        return .success
    }

    /// Prints a suite's report, as a table or as JSON; the exit status says whether every row passed.
    static func emit(_ report: BenchmarkReport, json: Bool) -> ExitStatus {
        writeOutput(json ? report.jsonText() : report.tableText())
        return report.allPassed ? .success : .failure
    }

    /// Runs a suite off the calling task and prints its report (`emit`); unless `judged`, it succeeds whatever
    /// the rows say.
    static func printReport(
        _ options: Options, judged: Bool = true, _ run: @escaping @Sendable () throws -> BenchmarkReport
    ) async throws -> ExitStatus {
        let report = try await Task.detached { try run() }.value
        let status = emit(report, json: options.json)
        return judged ? status : .success
    }

    /// Figures from a debug build say little about the product; say so where the table will not hide it.
    static func warnIfDebugBuild() {
        guard isDebugBuild else { return }
        FileHandle.standardError.write(
            Data("note: this is a debug build; build with -c release for real figures\n".utf8))
    }

    static func runJoin(_ options: Options) async throws -> ExitStatus {
        let clients = options.clients
        return try await printReport(options) { try JoinBenchmark.run(clients: clients) }
    }

    static func runDepartures(_ options: Options) async throws -> ExitStatus {
        let clients = options.clients
        let binary = options.arguments[BenchCommand.serverBinary]
        return try await printReport(options) { try DepartureBenchmark.run(clients: clients, serverBinary: binary) }
    }

    static func runSoak(_ options: Options) async throws -> ExitStatus {
        let minutes = BenchCommand.minutes(options.arguments, for: .soak)
        return try await printReport(options) { try SoakBenchmark.run(minutes: minutes) }
    }

    static func runFanout(_ options: Options) async throws -> ExitStatus {
        let nodes = options.arguments[BenchCommand.nodes]
        if nodes > 1 {
            return try await printReport(options) {
                try ClusterFanoutBenchmark.report(
                    nodes: nodes, speakers: options.speakers, listeners: options.listeners, seconds: options.seconds)
            }
        }
        return try await printReport(options, judged: false) {
            try FanoutBenchmark.report(
                speakers: options.speakers, listeners: options.listeners, seconds: options.seconds)
        }
    }

    static func runLatency(_ options: Options) async throws -> ExitStatus {
        try AudioBench.runLatency(options.arguments, json: options.json)
    }

    static func runCPU(_ options: Options) async throws -> ExitStatus {
        try AudioBench.runCPU(options.arguments, json: options.json)
    }

    static func runUI(_ options: Options) async throws -> ExitStatus {
        let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
        warnIfDebugBuild()
        let configuration = isDebugBuild ? "debug" : "release"
        let report = try await Task.detached { try UIBenchmark.report(roles: roles, configuration: configuration) }
            .value
        print(options.json ? report.jsonText() : report.tableText())
        return .success
    }
}
