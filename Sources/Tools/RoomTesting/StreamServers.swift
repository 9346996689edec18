import AudioCore
import Foundation

/// Why a stream server of a test could not be started, in words.
public struct StreamServerFailure: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A server from Debian the stream tests start on loopback, unprivileged, with a configuration of their own, and
/// stop by its PID.
public final class ServerProcess {
    public let name: String
    private let executable: String
    private let arguments: [String]
    private let ready: () -> Bool
    /// The server's own log of errors, quoted when it does not start.
    private let log: String?
    private var process: Process?

    init(name: String, executable: String, arguments: [String], log: String? = nil, ready: @escaping () -> Bool) {
        self.name = name
        self.executable = executable
        self.arguments = arguments
        self.log = log
        self.ready = ready
    }

    /// Whether the server's process is still there.
    public var isRunning: Bool { process?.isRunning ?? false }

    /// Starts the server and waits (at most 10 s) until `ready` holds.
    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        guard waitUntil(limit: 10, { ready() || !process.isRunning }), process.isRunning else {
            stop()
            let said = log.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }?.split(separator: "\n")
                .suffix(5).joined(separator: " / ")
            throw StreamServerFailure("\(name) did not start" + (said.map { ": \($0)" } ?? ""))
        }
    }

    /// Ends the server at once (SIGKILL), as a crash would, and waits for it.
    public func kill() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        if !waitUntil(limit: 5, { !process.isRunning }) { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }

    /// A program from Debian's packages, on PATH or where Debian puts it.
    public static func binary(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin", "/sbin"] {
            let candidate = folder + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Whether what listens on 127.0.0.1:`port` answers `request` with a reply that contains `expected` (read for
    /// at most a second).
    public static func answers(_ port: Int, _ request: String, with expected: String) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = connectIPv4(descriptor, host: "127.0.0.1", port: port) == 0
        let bytes = Array(request.utf8)
        guard connected, send(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { return false }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while reply.count < 65_536 {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            reply += buffer[0..<count]
        }
        return String(decoding: reply, as: UTF8.self).contains(expected)
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func accepts(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        return connectIPv4(descriptor, host: "127.0.0.1", port: port) == 0
    }
}

/// icecast2 on a free port with a generated configuration; when run as root it changes to `nobody`, as Icecast
/// insists, so its folder is writable by all. A port found free can be taken by another test's connection before
/// Icecast binds it: then it is started again on another, up to three times.
public func icecastServer(in folder: String, password: String) throws -> (ServerProcess, port: Int) {
    guard let binary = ServerProcess.binary("icecast2") else {
        throw StreamServerFailure("icecast2 is not installed; this test needs it (make test-deps installs it)")
    }
    try FileManager.default.createDirectory(atPath: folder + "/log", withIntermediateDirectories: true)
    // `nobody` must reach its folder through the test's own (made 0700).
    chmod((folder as NSString).deletingLastPathComponent, 0o711)
    chmod(folder, 0o777)
    chmod(folder + "/log", 0o777)
    let security =
        getuid() == 0
        ? "<security><chroot>0</chroot><changeowner><user>nobody</user><group>nogroup</group></changeowner></security>"
        : "<security><chroot>0</chroot></security>"
    return try onAFreePort { port in
        let configuration = """
            <icecast>
              <location>loopback</location><admin>test@localhost</admin><hostname>127.0.0.1</hostname>
              <limits><clients>20</clients><sources>4</sources><source-timeout>5</source-timeout>
                <burst-on-connect>0</burst-on-connect></limits>
              <authentication><source-password>\(password)</source-password><admin-user>admin</admin-user>
                <admin-password>\(password)</admin-password></authentication>
              <listen-socket><port>\(port)</port><bind-address>127.0.0.1</bind-address></listen-socket>
              <paths><basedir>\(folder)</basedir><logdir>\(folder)/log</logdir>
                <webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
              <logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>3</loglevel></logging>
              \(security)
            </icecast>
            """
        let file = folder + "/icecast.xml"
        try configuration.write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o644)
        // Ready when this very Icecast answers on its port (its status page names its admin), not when anything
        // accepts there.
        let server = ServerProcess(
            name: "icecast2", executable: binary, arguments: ["-c", file], log: folder + "/log/error.log"
        ) {
            ServerProcess.answers(port, "GET /status-json.xsl HTTP/1.0\r\n\r\n", with: "test@localhost")
        }
        try server.start()
        return server
    }
}

/// Starts a server with `start` on a port found free, and on another when it does not start there, up to three
/// times: between the moment a port is found free and the moment the server binds it, another test's outgoing
/// connection may take it.
func onAFreePort(_ start: (Int) throws -> ServerProcess) throws -> (ServerProcess, port: Int) {
    var failure: any Error = StreamServerFailure("no free port")
    for _ in 1...3 {
        let port = try freeLoopbackPort()
        do {
            return (try start(port), port)
        } catch {
            failure = error
        }
    }
    throw failure
}

/// nginx with `server` blocks of the test's own (an `rtmp` block loads Debian's RTMP module), run as an
/// unprivileged configuration with its own prefix, pid file, logs and temp folders.
public func nginxServer(in folder: String, rtmp: String? = nil, http: String? = nil, port: Int) throws -> ServerProcess
{
    guard let binary = ServerProcess.binary("nginx") else {
        throw StreamServerFailure("nginx is not installed; this test needs it (make test-deps installs it)")
    }
    let temp = folder + "/nginx-temp"
    try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: true)
    var configuration = ""
    if rtmp != nil {
        let module = "/usr/lib/nginx/modules/ngx_rtmp_module.so"
        guard FileManager.default.fileExists(atPath: module) else {
            throw StreamServerFailure(
                "libnginx-mod-rtmp is not installed; this test needs it (make test-deps installs it)")
        }
        configuration += "load_module \(module);\n"
    }
    configuration += """
        worker_processes 1;
        daemon off;
        master_process off;
        pid \(folder)/nginx.pid;
        error_log \(folder)/nginx-error.log info;
        events { worker_connections 64; }

        """
    if let rtmp { configuration += "rtmp {\n\(rtmp)\n}\n" }
    if let http {
        configuration += """
            http {
                access_log \(folder)/nginx-access.log;
                client_body_temp_path \(temp)/body;
                proxy_temp_path \(temp)/proxy;
                fastcgi_temp_path \(temp)/fastcgi;
                uwsgi_temp_path \(temp)/uwsgi;
                scgi_temp_path \(temp)/scgi;
                types { application/vnd.apple.mpegurl m3u8; video/mp2t ts; }
            \(http)
            }

            """
    }
    let file = folder + "/nginx.conf"
    try configuration.write(toFile: file, atomically: true, encoding: .utf8)
    let server = ServerProcess(
        name: "nginx", executable: binary,
        arguments: ["-p", folder + "/", "-e", folder + "/nginx-error.log", "-c", file], log: folder + "/nginx-error.log"
    ) { ServerProcess.accepts(port) }
    try server.start()
    return server
}

/// nginx-rtmp accepting publishers and players on application `live`.
public func rtmpServer(in folder: String) throws -> (ServerProcess, port: Int) {
    try onAFreePort { port in
        let block = """
            server {
                listen 127.0.0.1:\(port);
                chunk_size 4096;
                application live { live on; record off; }
            }
            """
        return try nginxServer(in: folder, rtmp: block, port: port)
    }
}

/// nginx serving `root` over HTTP, as docs/deploy.md sets HLS up.
public func hlsWebServer(in folder: String, root: String) throws -> (ServerProcess, port: Int) {
    try onAFreePort { port in
        let block = """
            server {
                listen 127.0.0.1:\(port);
                root \(root);
                location ~ \\.m3u8$ { add_header Cache-Control "no-cache"; }
            }
            """
        return try nginxServer(in: folder, http: block, port: port)
    }
}

/// The audio a real reader (ffmpeg from Debian) hears from `url` for `seconds`, as 48 kHz mono samples; nil when
/// ffmpeg could not read it.
public func readBack(_ url: String, seconds: Double) -> [Int16]? {
    guard let ffmpeg = ServerProcess.binary("ffmpeg") else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: ffmpeg)
    // An FLV stream from nginx-rtmp may carry video, as far as ffmpeg knows: it would look for it for 5 s.
    let probe = url.hasPrefix("rtmp://") ? ["-analyzeduration", "1000000"] : []
    process.arguments =
        ["-v", "error", "-nostdin", "-rw_timeout", "5000000"] + probe + [
            "-i", url, "-t", String(seconds), "-f", "s16le", "-ac", "1", "-ar", "48000", "-",
        ]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let timer = DispatchWorkItem { if process.isRunning { process.terminate() } }
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds + 15, execute: timer)
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    timer.cancel()
    guard process.terminationStatus == 0, data.count >= 2 else { return nil }
    return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
}

/// The strongest frequency of the middle of `samples` (the start may hold a decoder's ramp), or 0 when too short.
public func heardFrequency(_ samples: [Int16]) -> Double {
    guard samples.count >= 48_000 else { return 0 }
    let middle = samples.count / 2 - 4_800
    return Signals.dominantFrequency(samples[middle...])
}
