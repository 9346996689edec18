import Foundation

/// A PulseAudio daemon of one's own, for measuring and testing through real, real-time paced devices on a
/// machine without a sound card: null sinks of the given names, listening on a socket in a directory of its own
/// (anonymous access), nothing shared with anyone else's sound. ALSA reaches it through configuration text
/// naming ``socket`` (`pcm.NAME { type pulse; server "unix:SOCKET"; device "SINK" }`), so nothing in the
/// process's environment changes. It exits by itself 20 s after its last client leaves, so a crash does not
/// leave it behind. Needs Debian's `pulseaudio` (and `libasound2-plugins` for ALSA's pulse plugin).
public final class PrivatePulseAudio {
    /// The daemon's native-protocol socket.
    public let socket: String
    private let process = Process()

    /// The `pulseaudio` executable on the PATH, if installed.
    public static func executablePath() -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.map { "\($0)/pulseaudio" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts `executable` with one 48 kHz mono null sink per name, its runtime files in `directory`; with
    /// `highPriority`, its mixing thread runs at real-time priority where that is allowed, as a desktop's does.
    public init(executable: String, directory: String, sinks: [String], highPriority: Bool = false) throws {
        socket = directory + "/native"
        process.executableURL = URL(fileURLWithPath: executable)
        var arguments = ["-n", "--daemonize=no", "--exit-idle-time=20", "--use-pid-file=no", "--disallow-exit"]
        if highPriority { arguments += ["--realtime=yes", "--high-priority=yes"] }
        for sink in sinks { arguments += ["-L", "module-null-sink sink_name=\(sink) rate=48000 channels=1"] }
        arguments += ["-L", "module-native-protocol-unix auth-anonymous=1 socket=\(socket)"]
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = directory
        environment["HOME"] = directory
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Stops the daemon and waits for it.
    public func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// Whether the daemon accepts connections within `seconds`: the socket file appears before the daemon
    /// listens on it, and a busy machine can stretch that moment.
    public func isListening(within seconds: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !Self.accepts(socket) {
            guard Date() < deadline else { return false }
            usleep(10_000)
        }
        return true
    }

    private static func accepts(_ path: String) -> Bool {
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}
