// swift-tools-version:6.0
import PackageDescription

/// Clubroom: audio rooms in the terminal.
///
/// Sources/ is a few wings, each a folder of targets: System (the C libraries from Debian under System/C, and the
/// Swift adapters over them and over Linux), Core (pure: the room model, codecs, the screen as a function of
/// state), Server, Cluster (entered through the server's seam only), Client, Demo, Benchmarks, Tools (fuzzing and
/// test support) and the `clubroom` executable, which only wires them together (docs/architecture.md).
///
/// Dependencies point one way: the executable -> runtimes and adapters -> pure targets -> the standard library
/// and Foundation. Pure targets never import a C module, so they build and test without ncurses, Opus or ALSA.
let package = Package(
    name: "Clubroom",
    products: [
        .executable(name: "clubroom", targets: ["clubroom"])
    ],
    targets: [
        // MARK: C libraries from Debian, each a module map plus a shim of inline wrappers.
        .systemLibrary(
            name: "CNcursesw", path: "Sources/System/C/CNcursesw", pkgConfig: "ncursesw",
            providers: [.apt(["libncursesw5-dev"])]),
        .systemLibrary(
            name: "COpus", path: "Sources/System/C/COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(
            name: "COpusFile", path: "Sources/System/C/COpusFile", pkgConfig: "opusfile",
            providers: [.apt(["libopusfile-dev"])]),
        .systemLibrary(
            name: "COpusEnc", path: "Sources/System/C/COpusEnc", pkgConfig: "libopusenc",
            providers: [.apt(["libopusenc-dev"])]),
        // libshout, the Icecast source client.
        .systemLibrary(
            name: "CShout", path: "Sources/System/C/CShout", pkgConfig: "shout", providers: [.apt(["libshout3-dev"])]),
        // FFmpeg's muxers (HLS, FLV over RTMP) and its AAC encoder.
        .systemLibrary(
            name: "CFFmpeg", path: "Sources/System/C/CFFmpeg", pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]),
        .systemLibrary(
            name: "CALSA", path: "Sources/System/C/CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(
            name: "CCrypto", path: "Sources/System/C/CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CSpeexDSP", path: "Sources/System/C/CSpeexDSP", pkgConfig: "speexdsp",
            providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(
            name: "CSQLite", path: "Sources/System/C/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CEventPoll", path: "Sources/System/C/CEventPoll"),
        .systemLibrary(
            name: "CSRTP", path: "Sources/System/C/CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(
            name: "CHiredis", path: "Sources/System/C/CHiredis", pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]),
        // sendmmsg/recvmmsg need _GNU_SOURCE, which only a C file of our own can set.
        .target(name: "CMediaIO", path: "Sources/System/C/CMediaIO"),
        .target(name: "CSpawn", path: "Sources/System/C/CSpawn"),
        // libsrtp2's AES-CM and HMAC-SHA1 on libcrypto, through libsrtp's own replacement calls: Debian builds
        // libsrtp2 on NSS, which sets up a PKCS #11 context for every packet (docs/media.md).
        .target(
            name: "CSRTPCrypto", path: "Sources/System/C/CSRTPCrypto",
            linkerSettings: [.linkedLibrary("srtp2"), .linkedLibrary("crypto")]),

        // MARK: Pure targets.
        .target(name: "StrictJSON", path: "Sources/Core/StrictJSON"),
        // The room's `/` grammar suggests commands with the command line's own rule (`Arguments.closestMatch`).
        .target(name: "RoomCore", dependencies: ["StrictJSON", "Arguments"], path: "Sources/Core/RoomCore"),
        // The control protocol: messages, codecs, tokens, invite links; it announces the media profile and reads
        // the room from an upgrade request.
        .target(
            name: "RoomProtocol", dependencies: ["RoomCore", "StrictJSON", "Platform", "MediaWire", "WebSocket"],
            path: "Sources/Core/RoomProtocol"),
        // RFC 6455 framing, the HTTP upgrade and UTF-8 validation, knowing nothing of rooms.
        .target(name: "WebSocket", dependencies: ["Platform"], path: "Sources/Core/WebSocket"),
        // RTP and RTCP as the media plane reads and writes them (RFC 3550, RFC 6464 levels, one-byte header
        // extensions, sequence checks), knowing nothing of rooms.
        .target(name: "MediaWire", path: "Sources/Core/MediaWire"),
        .target(name: "AudioCore", path: "Sources/Core/AudioCore"),
        .target(name: "TermUI", path: "Sources/Core/TermUI"),
        .target(name: "Arguments", path: "Sources/Core/Arguments"),
        // Signals as calls on a thread of their own, for every command that must stop cleanly.
        .target(name: "ProcessSignals", dependencies: ["Platform"], path: "Sources/System/ProcessSignals"),

        // MARK: Bundled data: the default role table and the demo's speech clips.
        .target(name: "ClubroomResources", path: "Resources", resources: [.copy("roles.json"), .copy("clips")]),

        // MARK: The floor every target may stand on: the monotonic clock, CPU clocks, a thread starter that names
        // threads in the kernel, Duration conversions, `PlacedError`, percent-decoding, the one naming rule and the
        // one way to start a child process that inherits nothing.
        .target(name: "Platform", dependencies: ["CSpawn"], path: "Sources/System/Platform"),

        // MARK: Adapters over the C libraries.
        .target(name: "TermCurses", dependencies: ["CNcursesw", "TermUI"], path: "Sources/System/TermCurses"),
        .target(
            name: "AudioCodec", dependencies: ["COpus", "COpusFile", "COpusEnc", "CSpeexDSP", "AudioCore"],
            path: "Sources/System/AudioCodec"),
        .target(
            name: "AudioDevices", dependencies: ["CALSA", "AudioCore", "AudioCodec", "Platform"],
            path: "Sources/System/AudioDevices"),
        // libcrypto's primitives (SHA-1, HMAC, AES-GCM, random bytes) and the server's secret file; nothing of rooms.
        .target(name: "Crypto", dependencies: ["CCrypto"], path: "Sources/System/Crypto"),
        // Room tokens and invites signed and checked with the server's secret: the control protocol's claims on
        // Crypto's HMAC.
        .target(name: "RoomTokens", dependencies: ["Crypto", "RoomProtocol"], path: "Sources/System/RoomTokens"),
        .target(
            name: "RoomPersistence", dependencies: ["CSQLite", "StrictJSON"], path: "Sources/System/RoomPersistence"),
        .target(
            name: "RoomTransport", dependencies: ["WebSocket", "CCrypto", "CEventPoll", "Crypto", "Platform"],
            path: "Sources/System/RoomTransport"),
        .target(
            name: "MediaTransport", dependencies: ["CSRTP", "CSRTPCrypto", "CMediaIO"],
            path: "Sources/System/MediaTransport"),
        .target(name: "RedisClient", dependencies: ["CHiredis", "Platform"], path: "Sources/System/RedisClient"),
        // The recorder's live outputs (Icecast, HLS, RTMP), each off the mixing thread with its own queue and
        // reconnects.
        .target(
            name: "StreamOutputs", dependencies: ["CShout", "COpusEnc", "CFFmpeg", "AudioCore", "Platform"],
            path: "Sources/System/StreamOutputs"),
        // The cluster's side of Redis: keys, fenced room ownership, event streams, node membership.
        .target(name: "ClusterState", dependencies: ["RedisClient", "Platform"], path: "Sources/Cluster/ClusterState"),

        // MARK: The server.
        .target(
            name: "MediaServer", dependencies: ["MediaTransport", "MediaWire", "AudioCore", "Platform"],
            path: "Sources/Server/MediaServer"),
        // Media between cluster nodes: once per speaker per remote node, under per-incarnation keys.
        .target(
            name: "MediaRelay", dependencies: ["MediaServer", "MediaTransport", "MediaWire", "Crypto", "Platform"],
            path: "Sources/Cluster/MediaRelay"),
        .target(
            name: "RoomServer",
            dependencies: [
                "RoomCore", "RoomProtocol", "RoomTransport", "Crypto", "RoomPersistence", "MediaServer",
                "MediaTransport", "MediaWire", "Platform", "WebSocket", "RoomTokens", "AudioCore",
            ], path: "Sources/Server/RoomServer"),
        // A server's rooms in a cluster (owned, replicated, relayed, listed), behind RoomServer's `ServerCluster`.
        .target(
            name: "ClusterServer",
            dependencies: [
                "RoomServer", "ClusterState", "RedisClient", "MediaRelay", "MediaTransport", "RoomCore", "RoomProtocol",
                "RoomTransport", "Crypto", "StrictJSON", "AudioCore", "RoomPersistence",
            ], path: "Sources/Cluster/ClusterServer"),

        // MARK: The client.
        // Its sound, whole: devices, send path, media plane (SRTP, jitter buffers, decoders, mix), volumes.
        .target(
            name: "ClientAudio",
            dependencies: [
                "AudioCore", "AudioCodec", "AudioDevices", "MediaTransport", "RoomProtocol", "Platform", "MediaWire",
            ],
            path: "Sources/Client/ClientAudio"),
        .target(
            name: "RoomClient",
            dependencies: [
                "RoomCore", "RoomProtocol", "StrictJSON", "RoomTransport", "ClientAudio", "AudioCore", "WebSocket",
                "Platform",
            ],
            path: "Sources/Client/RoomClient"),
        // The recorder: a participant that mixes the room as a listener hears it into its outputs (an Ogg Opus
        // file, streams) and keeps the room's record beside the file.
        .target(
            name: "RoomRecorder",
            dependencies: [
                "AudioCodec", "AudioCore", "ClientAudio", "Platform", "RoomClient", "RoomCore", "RoomProtocol",
                "RoomTransport", "StrictJSON", "WebSocket",
            ],
            path: "Sources/Client/RoomRecorder"),
        // The room's and the lobby's state, reducers and view models (pure), and the runtime that runs them: one
        // driver (Store), one screen runner, one line runner, on the terminal with its signals.
        .target(
            name: "RoomApp", dependencies: ["RoomCore", "TermUI", "AudioCore", "Platform"], path: "Sources/Core/RoomApp"
        ),
        .target(
            name: "RoomAppRuntime",
            dependencies: [
                "RoomApp", "RoomCore", "TermUI", "TermCurses", "RoomClient", "RoomProtocol", "RoomTransport",
                "ClientAudio", "Platform", "WebSocket", "ProcessSignals",
            ], path: "Sources/Client/RoomAppRuntime"),

        // MARK: Test support.
        .target(
            name: "RoomTesting", dependencies: ["AudioCore", "TermUI", "Platform"],
            path: "Sources/Tools/RoomTesting"),
        // The front ends' test doubles: scripted room and lobby connections, a screen in memory. For tests and
        // the UI benchmark; no product target depends on it.
        .target(
            name: "RuntimeTesting", dependencies: ["RoomAppRuntime", "RoomApp", "RoomCore", "TermUI"],
            path: "Sources/Tools/RuntimeTesting"),
        // Counts heap allocations per thread by defining malloc in the test binary; for the real-time tests.
        .target(name: "CAllocationCounter", path: "Tests/CAllocationCounter"),

        // MARK: The demo: an embedded server and a room of bots.
        .target(
            name: "Demo",
            dependencies: [
                "RoomCore", "RoomProtocol", "RoomTransport", "Crypto", "RoomServer", "RoomClient", "ClubroomResources",
                "ClientAudio", "AudioCore", "AudioCodec", "Platform", "WebSocket", "RoomTokens",
            ]),

        // MARK: Benchmarks, run by `clubroom bench`: one folder, a target per area. Product targets never import
        // them (`make lint` checks).
        .target(name: "BenchmarkSupport", path: "Sources/Benchmarks/Support"),
        .target(
            name: "StoreBenchmarks", dependencies: ["BenchmarkSupport", "RoomCore", "Platform"],
            path: "Sources/Benchmarks/Store"),
        .target(
            name: "ServerBenchmarks",
            dependencies: [
                "BenchmarkSupport", "Platform", "RoomCore", "RoomProtocol", "RoomServer", "RoomTransport", "Crypto",
                "ClubroomResources", "MediaServer", "MediaTransport", "StrictJSON", "MediaWire", "WebSocket",
                "RoomTokens",
            ],
            path: "Sources/Benchmarks/Server"),
        .target(
            name: "AudioBenchmarks",
            dependencies: [
                "BenchmarkSupport", "ServerBenchmarks", "Platform", "AudioCore", "AudioCodec", "AudioDevices",
                "ClientAudio", "MediaTransport", "RoomProtocol", "RoomClient", "RoomApp", "RoomCore", "Crypto",
                "RoomTransport", "MediaWire", "WebSocket", "RoomTokens",
            ],
            path: "Sources/Benchmarks/Audio"),
        .target(
            name: "UIBenchmarks",
            dependencies: [
                "BenchmarkSupport", "Platform", "RoomApp", "RoomAppRuntime", "RoomCore", "TermUI", "RuntimeTesting",
            ],
            path: "Sources/Benchmarks/UI"),
        // The room directory under load: a server in process, 1,000 rooms, 1,000 lobbies.
        .target(
            name: "DirectoryBenchmarks",
            dependencies: [
                "BenchmarkSupport", "Platform", "Crypto", "RoomCore", "RoomProtocol", "RoomServer", "RoomTransport",
                "WebSocket", "RoomTokens",
            ],
            path: "Sources/Benchmarks/Directory"),
        // The live outputs against icecast2 and nginx of the bench's own, read back by ffmpeg.
        .target(
            name: "StreamBenchmarks",
            dependencies: ["BenchmarkSupport", "StreamOutputs", "RoomTesting", "AudioCodec", "AudioCore", "Platform"],
            path: "Sources/Benchmarks/Stream"),
        // The cluster: `clubroom serve` nodes on 127.0.0.2-4 around a Redis of the bench's own.
        .target(
            name: "ClusterBenchmarks",
            dependencies: [
                "BenchmarkSupport", "ServerBenchmarks", "Platform", "ClusterState", "RedisClient", "Crypto", "RoomCore",
                "RoomProtocol", "RoomTransport", "StrictJSON", "MediaRelay", "MediaServer", "MediaTransport",
                "RoomServer", "ClubroomResources", "MediaWire", "WebSocket", "RoomTokens", "ClusterServer",
            ],
            path: "Sources/Benchmarks/Cluster"),

        // MARK: Fuzzing: the properties every fuzz target checks (the tests replay its corpus), and the executable
        // `make fuzz` builds with libFuzzer. Only the decoders' own modules go in, so the sanitized build stays small.
        .target(
            name: "FuzzChecks",
            dependencies: [
                "RoomCore", "RoomProtocol", "StrictJSON", "AudioCore", "TermUI", "Crypto", "MediaTransport",
                "MediaWire", "Platform", "WebSocket",
            ], path: "Sources/Tools/FuzzChecks"),
        .executableTarget(name: "clubroom-fuzz", dependencies: ["FuzzChecks"], path: "Sources/Tools/clubroom-fuzz"),

        // MARK: The executable.
        .executableTarget(
            name: "clubroom",
            dependencies: [
                "Arguments", "RoomCore", "StrictJSON", "ClubroomResources", "TermUI", "TermCurses", "AudioCore",
                "AudioCodec", "AudioDevices", "ClientAudio", "RoomProtocol", "RoomTransport", "Crypto", "RoomServer",
                "RoomClient", "RoomApp", "RoomAppRuntime", "Demo", "ProcessSignals", "BenchmarkSupport",
                "StoreBenchmarks", "ServerBenchmarks", "AudioBenchmarks", "UIBenchmarks", "DirectoryBenchmarks",
                "ClusterBenchmarks", "RedisClient", "Platform", "RoomPersistence", "WebSocket", "ClusterServer",
                "RoomTokens", "RoomRecorder", "StreamOutputs", "StreamBenchmarks",
            ]),

        // MARK: Tests.
        .testTarget(name: "RoomCoreTests", dependencies: ["RoomCore", "ClubroomResources", "RoomTesting"]),
        .testTarget(
            name: "BenchmarksTests",
            dependencies: [
                "BenchmarkSupport", "StoreBenchmarks", "UIBenchmarks", "ClusterBenchmarks", "RoomCore",
                "ClubroomResources", "RoomTesting",
            ]),
        .testTarget(name: "ArgumentsTests", dependencies: ["Arguments"]),
        .testTarget(name: "PlatformTests", dependencies: ["Platform", "RoomTesting"]),
        .testTarget(name: "ProcessSignalsTests", dependencies: ["ProcessSignals", "RoomTesting"]),
        .testTarget(name: "AudioCoreTests", dependencies: ["AudioCore", "RoomTesting"]),
        .testTarget(name: "CLITests", dependencies: ["RoomTesting"]),
        .testTarget(
            name: "RoomProtocolTests",
            dependencies: ["RoomProtocol", "RoomCore", "StrictJSON", "RoomTesting", "MediaWire", "WebSocket"]),
        .testTarget(
            name: "CryptoTests", dependencies: ["Crypto", "RoomProtocol", "RoomTesting", "WebSocket", "RoomTokens"]),
        .testTarget(name: "RoomPersistenceTests", dependencies: ["RoomPersistence"]),
        .testTarget(name: "TermUITests", dependencies: ["TermUI", "RoomTesting"], exclude: ["Goldens"]),
        .testTarget(name: "TermCursesTests", dependencies: ["TermCurses", "TermUI", "CNcursesw"]),
        .testTarget(
            name: "RoomTransportTests",
            dependencies: ["RoomTransport", "RoomProtocol", "Crypto", "RoomTesting", "WebSocket"],
            exclude: ["interop"]),
        .testTarget(name: "AudioCodecTests", dependencies: ["AudioCodec", "CAllocationCounter", "RoomTesting"]),
        .testTarget(
            name: "AudioDevicesTests",
            dependencies: ["AudioDevices", "AudioCore", "Platform", "CAllocationCounter", "RoomTesting"]),
        .testTarget(
            name: "ClientAudioTests",
            dependencies: [
                "ClientAudio", "AudioCore", "AudioCodec", "AudioDevices", "MediaTransport", "Platform", "RoomProtocol",
                "RoomTesting", "MediaWire",
            ]),
        .testTarget(
            name: "AudioBenchmarksTests",
            dependencies: [
                "AudioBenchmarks", "AudioCore", "ClientAudio", "MediaTransport", "Platform", "RoomClient",
                "ServerBenchmarks", "ClubroomResources", "RoomCore", "MediaWire", "AudioDevices", "RoomTesting",
            ]),
        .testTarget(name: "ControlProtocolTests", dependencies: ["RoomProtocol", "RoomCore", "StrictJSON"]),
        .testTarget(
            name: "RoomServerTests",
            dependencies: [
                "RoomServer", "RoomCore", "RoomProtocol", "RoomTransport", "ClubroomResources", "MediaServer",
                "MediaTransport", "ClusterServer", "RoomTesting",
            ]),
        .testTarget(
            name: "RoomRecorderTests",
            dependencies: ["RoomRecorder", "RoomCore", "AudioCodec", "AudioCore", "StrictJSON", "RoomTesting"]),
        .testTarget(
            name: "RoomClientTests", dependencies: ["RoomClient", "RoomCore", "RoomProtocol", "ClubroomResources"]),
        .testTarget(
            name: "ServerIntegrationTests",
            dependencies: [
                "RoomProtocol", "StrictJSON", "RoomClient", "RoomCore", "RoomTransport", "Crypto", "RoomPersistence",
                "ClubroomResources", "RoomTesting", "RoomApp", "RoomAppRuntime", "WebSocket", "RoomTokens",
            ]),
        .testTarget(
            name: "RoomAppTests", dependencies: ["RoomApp", "RoomCore", "TermUI", "ClubroomResources", "RoomTesting"],
            exclude: ["Goldens"]),
        .testTarget(
            name: "RoomAppRuntimeTests",
            dependencies: ["RoomAppRuntime", "RoomApp", "RoomCore", "TermUI", "RoomTesting", "RuntimeTesting"]),
        .testTarget(name: "UIEndToEndTests", dependencies: ["RoomTesting"]),
        .testTarget(name: "DemoTests", dependencies: ["Demo", "ClubroomResources", "RoomProtocol"]),
        .testTarget(name: "DemoEndToEndTests", dependencies: ["RoomTesting"]),
        .testTarget(name: "MediaTransportTests", dependencies: ["MediaTransport", "MediaWire", "RoomTesting"]),
        .testTarget(
            name: "MediaServerTests", dependencies: ["MediaServer", "MediaTransport", "MediaWire", "RoomTesting"]),
        .testTarget(name: "RedisClientTests", dependencies: ["RedisClient", "RoomTesting"]),
        .testTarget(name: "ClusterStateTests", dependencies: ["ClusterState", "RedisClient", "RoomTesting"]),
        .testTarget(
            name: "ClusterServerTests",
            dependencies: [
                "ClusterServer", "RoomServer", "ClusterState", "RoomCore", "RoomProtocol", "ClubroomResources",
                "RedisClient", "RoomPersistence",
            ], exclude: ["Goldens"]),
        .testTarget(
            name: "MediaRelayTests",
            dependencies: ["MediaRelay", "MediaServer", "MediaTransport", "RoomTesting", "MediaWire"]),
        // Several `clubroom serve` nodes on 127.0.0.2-4, with the fault tools (kill -9, SIGSTOP, partitions).
        .testTarget(
            name: "ClusterEndToEndTests",
            dependencies: [
                "RoomTesting", "StrictJSON", "RedisClient", "RoomTransport", "Crypto", "RoomServer", "ClusterState",
                "ClusterServer", "AudioBenchmarks", "ClientAudio", "RoomCore",
            ]),
        .testTarget(name: "FuzzTests", dependencies: ["FuzzChecks"]),
        // The live outputs against icecast2 and nginx (RTMP, and serving HLS) of their own, read back by ffmpeg.
        .testTarget(
            name: "StreamOutputsTests", dependencies: ["StreamOutputs", "AudioCore", "RoomTesting", "Platform"]),
        // Runs the built clubroom (join --plain, bot) against hostile servers.
        .testTarget(
            name: "ClientEdgeTests",
            dependencies: [
                "ClubroomResources", "Crypto", "RoomClient", "RoomCore", "RoomProtocol", "StrictJSON", "RoomTransport",
                "RoomTesting", "WebSocket",
            ]),
        // Runs the built clubroom: a server and bots over loopback.
        .testTarget(name: "MediaEndToEndTests", dependencies: ["AudioCore", "RoomTesting"]),
    ]
)
