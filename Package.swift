// swift-tools-version:6.0
import PackageDescription

/// Clubroom: audio rooms in the terminal.
///
/// Dependencies point one way: the executable -> runtimes and adapters -> pure targets -> the standard library
/// and Foundation. Pure targets (`StrictJSON`, `RoomCore`, `RoomProtocol`, `AudioCore`, `TermUI`, `Arguments`) never
/// import a C module, so they build and test without ncurses, Opus or ALSA.
let package = Package(
    name: "Clubroom",
    products: [
        .executable(name: "clubroom", targets: ["clubroom"])
    ],
    targets: [
        // MARK: C libraries from Debian, each a module map plus a shim of inline wrappers.
        .systemLibrary(
            name: "CNcursesw", pkgConfig: "ncursesw", providers: [.apt(["libncursesw5-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CEventPoll"),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(name: "CHiredis", pkgConfig: "hiredis", providers: [.apt(["libhiredis-dev"])]),
        // sendmmsg/recvmmsg need _GNU_SOURCE, which only a C file of our own can set.
        .target(name: "CMediaIO"),

        // MARK: Pure targets.
        .target(name: "StrictJSON"),
        // The room's `/` grammar suggests commands with the command line's own rule (`Arguments.closestMatch`).
        .target(name: "RoomCore", dependencies: ["StrictJSON", "Arguments"]),
        .target(name: "RoomProtocol", dependencies: ["RoomCore", "StrictJSON"]),
        .target(name: "AudioCore"),
        .target(name: "TermUI", dependencies: ["RoomCore"]),
        .target(name: "Arguments"),
        // Signals as calls on a thread of their own, for every command that must stop cleanly.
        .target(name: "ProcessSignals"),

        // MARK: Benchmarks, run by `clubroom bench`.
        .target(name: "Benchmarks", dependencies: ["RoomCore"]),

        // MARK: Bundled data: the default role table and the demo's speech clips.
        .target(name: "ClubroomResources", path: "Resources", resources: [.copy("roles.json"), .copy("clips")]),

        // MARK: Adapters over the C libraries.
        .target(name: "TermCurses", dependencies: ["CNcursesw", "TermUI"]),
        .target(name: "AudioCodec", dependencies: ["COpus", "CSpeexDSP", "AudioCore"]),
        .target(name: "AudioDevices", dependencies: ["CALSA", "AudioCore", "AudioCodec"]),
        .target(name: "AudioEngine", dependencies: ["AudioCore", "AudioCodec", "AudioDevices"]),
        .target(name: "Crypto", dependencies: ["CCrypto", "RoomProtocol"]),
        .target(name: "RoomPersistence", dependencies: ["CSQLite", "StrictJSON"]),
        .target(
            name: "RoomTransport", dependencies: ["RoomCore", "RoomProtocol", "CCrypto", "CEventPoll", "Crypto"]),
        .target(name: "MediaTransport", dependencies: ["CSRTP", "CMediaIO", "RoomProtocol"]),
        .target(name: "MediaServer", dependencies: ["MediaTransport", "RoomProtocol", "AudioCore"]),
        // Media between cluster nodes: once per speaker per remote node, under per-incarnation keys.
        .target(name: "MediaRelay", dependencies: ["MediaServer", "MediaTransport", "RoomProtocol", "Crypto"]),
        .target(name: "MediaClient", dependencies: ["MediaTransport", "RoomProtocol", "AudioCore", "AudioCodec"]),
        .target(name: "RedisClient", dependencies: ["CHiredis"]),
        // The cluster's side of Redis: keys, fenced room ownership, event streams, node membership.
        .target(name: "ClusterState", dependencies: ["RedisClient"]),

        // MARK: Runtimes.
        .target(
            name: "RoomServer",
            dependencies: [
                "RoomCore", "RoomProtocol", "RoomTransport", "Crypto", "RoomPersistence", "MediaServer",
                "MediaTransport",
            ]),
        .target(
            name: "RoomClient",
            dependencies: ["RoomCore", "RoomProtocol", "StrictJSON", "RoomTransport", "MediaClient", "AudioCore"]),
        // The room screen's state, reducer and view model (pure), and the loop that runs it.
        .target(name: "RoomApp", dependencies: ["RoomCore", "TermUI", "AudioCore"]),
        .target(
            name: "RoomAppRuntime",
            dependencies: [
                "RoomApp", "RoomCore", "TermUI", "TermCurses", "RoomClient", "RoomProtocol", "RoomTransport",
                "Benchmarks", "AudioCore", "AudioDevices", "AudioEngine", "MediaClient",
            ]),

        // MARK: Test support.
        .target(name: "RoomTesting", dependencies: ["AudioCore", "TermUI"]),
        // Counts heap allocations per thread by defining malloc in the test binary; for the real-time tests.
        .target(name: "CAllocationCounter", path: "Tests/CAllocationCounter"),

        // MARK: The demo: an embedded server and a room of bots.
        .target(
            name: "Demo",
            dependencies: [
                "RoomCore", "RoomProtocol", "RoomTransport", "Crypto", "RoomServer", "RoomClient", "ClubroomResources",
                "MediaClient", "AudioCore", "AudioCodec",
            ]),

        // MARK: Audio benchmarks through a room server in process: the product's clients, server and devices.
        .target(
            name: "AudioPathBenchmarks",
            dependencies: [
                "AudioCore", "AudioCodec", "AudioDevices", "AudioEngine", "MediaTransport", "MediaClient",
                "RoomProtocol",
                "RoomClient", "RoomAppRuntime", "Demo",
            ]),

        // MARK: The executable.
        .executableTarget(
            name: "clubroom",
            dependencies: [
                "Arguments", "RoomCore", "StrictJSON", "ClubroomResources", "TermUI", "TermCurses", "AudioCore",
                "AudioCodec",
                "AudioDevices", "AudioEngine", "RoomProtocol", "RoomTransport", "Crypto", "RoomServer", "RoomClient",
                "RoomApp", "RoomAppRuntime", "Benchmarks", "MediaTransport", "MediaServer", "MediaClient", "Demo",
                "AudioPathBenchmarks", "ProcessSignals",
            ]),

        // MARK: Tests.
        .testTarget(name: "RoomCoreTests", dependencies: ["RoomCore", "ClubroomResources", "RoomTesting"]),
        .testTarget(name: "BenchmarksTests", dependencies: ["Benchmarks", "RoomCore", "ClubroomResources"]),
        .testTarget(name: "ArgumentsTests", dependencies: ["Arguments"]),
        .testTarget(name: "ProcessSignalsTests", dependencies: ["ProcessSignals"]),
        .testTarget(name: "AudioCoreTests", dependencies: ["AudioCore", "RoomTesting"]),
        .testTarget(name: "CLITests", dependencies: ["RoomTesting"]),
        .testTarget(name: "RoomProtocolTests", dependencies: ["RoomProtocol", "StrictJSON", "RoomTesting"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "RoomProtocol", "RoomTesting"]),
        .testTarget(name: "RoomPersistenceTests", dependencies: ["RoomPersistence"]),
        .testTarget(name: "TermUITests", dependencies: ["TermUI", "RoomTesting"], exclude: ["Goldens"]),
        .testTarget(name: "TermCursesTests", dependencies: ["TermCurses", "TermUI"]),
        .testTarget(
            name: "RoomTransportTests", dependencies: ["RoomTransport", "RoomProtocol", "Crypto", "RoomTesting"],
            exclude: ["interop"]),
        .testTarget(name: "AudioCodecTests", dependencies: ["AudioCodec", "CAllocationCounter", "RoomTesting"]),
        .testTarget(
            name: "AudioDevicesTests",
            dependencies: ["AudioDevices", "AudioCore", "AudioCodec", "CAllocationCounter", "RoomTesting"]),
        .testTarget(
            name: "AudioEngineTests",
            dependencies: ["AudioEngine", "AudioCore", "AudioCodec", "AudioDevices", "RoomTesting"]),
        .testTarget(
            name: "AudioPathBenchmarksTests",
            dependencies: ["AudioPathBenchmarks", "MediaTransport", "RoomProtocol"]),
        .testTarget(name: "ControlProtocolTests", dependencies: ["RoomProtocol", "RoomCore", "StrictJSON"]),
        .testTarget(
            name: "RoomServerTests",
            dependencies: ["RoomServer", "RoomCore", "RoomProtocol", "RoomTransport", "ClubroomResources"]),
        .testTarget(
            name: "RoomClientTests", dependencies: ["RoomClient", "RoomCore", "RoomProtocol", "ClubroomResources"]),
        .testTarget(
            name: "ServerIntegrationTests",
            dependencies: [
                "RoomProtocol", "StrictJSON", "RoomClient", "RoomCore", "RoomTransport", "Crypto", "RoomPersistence",
                "ClubroomResources", "RoomTesting", "RoomApp", "RoomAppRuntime",
            ]),
        .testTarget(
            name: "RoomAppTests", dependencies: ["RoomApp", "RoomCore", "TermUI", "ClubroomResources", "RoomTesting"],
            exclude: ["Goldens"]),
        .testTarget(
            name: "RoomAppRuntimeTests", dependencies: ["RoomAppRuntime", "RoomApp", "RoomCore", "TermUI", "AudioCore"]),
        .testTarget(name: "UIEndToEndTests", dependencies: ["RoomTesting"]),
        .testTarget(name: "DemoTests", dependencies: ["Demo", "ClubroomResources", "RoomProtocol"]),
        .testTarget(name: "DemoEndToEndTests", dependencies: ["RoomTesting"]),
        .testTarget(name: "MediaTransportTests", dependencies: ["MediaTransport", "RoomProtocol"]),
        .testTarget(name: "MediaClientTests", dependencies: ["MediaClient"]),
        .testTarget(name: "MediaServerTests", dependencies: ["MediaServer", "MediaTransport", "RoomProtocol"]),
        .testTarget(name: "RedisClientTests", dependencies: ["RedisClient", "RoomTesting"]),
        .testTarget(name: "ClusterStateTests", dependencies: ["ClusterState", "RedisClient", "RoomTesting"]),
        .testTarget(
            name: "MediaRelayTests",
            dependencies: ["MediaRelay", "MediaServer", "MediaTransport", "RoomProtocol", "RoomTesting"]),
        // Several `clubroom serve` nodes on 127.0.0.2-4, with the fault tools (kill -9, SIGSTOP, partitions).
        .testTarget(name: "ClusterEndToEndTests", dependencies: ["RoomTesting"]),
        // Runs the built clubroom: a server and bots over loopback.
        .testTarget(name: "MediaEndToEndTests", dependencies: ["AudioCore", "RoomTesting"]),
    ]
)
