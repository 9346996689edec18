import Dispatch
import Foundation
import RoomProtocol
import RoomTransport
import Synchronization

/// Events seen by a test, collected from the loop thread and awaited with a timeout.
final class Recorder<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])
    private let signal = DispatchSemaphore(value: 0)

    func record(_ event: Event) {
        events.withLock { $0.append(event) }
        signal.signal()
    }

    var all: [Event] { events.withLock { $0 } }

    /// Waits until `count` events arrived or `seconds` passed; returns what arrived.
    @discardableResult
    func wait(for count: Int, seconds: Double = 5) -> [Event] {
        let deadline = DispatchTime.now() + seconds
        while self.all.count < count {
            if signal.wait(timeout: deadline) == .timedOut { break }
        }
        return all
    }
}

enum ClientEvent: Sendable, Equatable {
    case message(WebSocketPayload)
    case closed(UInt16, String)
}

enum ServerEvent: Sendable, Equatable {
    case opened(String)
    case message(WebSocketPayload)
    case closed(UInt16, String)
}

/// An echo server: echoes every message; `close CODE REASON` makes it close with that code.
func startEchoServer(
    tls: TLSServerConfiguration? = nil, options: WebSocketOptions = WebSocketOptions(),
    recorder: Recorder<ServerEvent> = Recorder()
) throws -> WebSocketServer {
    try WebSocketServer(
        host: "127.0.0.1", port: 0, tls: tls, options: options,
        handler: WebSocketServer.Handler(
            onUpgrade: { request, _ in
                if request.path == "/forbidden" { return .reject(status: 403, reason: "not for you") }
                return .accept
            },
            onOpen: { connection in recorder.record(.opened(connection.request?.target ?? "")) },
            onMessage: { connection, payload in
                recorder.record(.message(payload))
                if case .text(let text) = payload, text.hasPrefix("close ") {
                    let parts = text.split(separator: " ", maxSplits: 2)
                    let code = UInt16(parts[1]) ?? 1000
                    connection.close(code: WebSocketCloseCode(code), reason: parts.count > 2 ? String(parts[2]) : "")
                } else if case .text(let text) = payload, text.hasPrefix("flood") {
                    for _ in 0..<256 { connection.send(binary: [UInt8](repeating: 7, count: 64 * 1024)) }
                } else {
                    switch payload {
                    case .text(let text): connection.send(text: text)
                    case .binary(let bytes): connection.send(binary: bytes)
                    }
                }
            },
            onClose: { _, code, reason in recorder.record(.closed(code.rawValue, reason)) }
        ))
}

func connectClient(
    _ url: String, tls: TLSClientConfiguration = TLSClientConfiguration(),
    options: WebSocketOptions = WebSocketOptions(), headers: HTTPHeaders = HTTPHeaders()
) throws -> (WebSocketClient, Recorder<ClientEvent>) {
    let recorder = Recorder<ClientEvent>()
    let client = try WebSocketClient.connect(
        to: url, headers: headers, tls: tls, options: options,
        handler: WebSocketClient.Handler(
            onMessage: { recorder.record(.message($0)) },
            onClose: { recorder.record(.closed($0.rawValue, $1)) }))
    return (client, recorder)
}

/// The folder holding the Python interop scripts.
let interopDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("interop")

/// A child process with a hard deadline: killed when it outlives it, so no test can hang.
struct ChildProcess {
    let process = Process()
    let output = Pipe()
    let errors = Pipe()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// The first line the child prints, or nil when it printed none within `seconds`.
    func firstLine(seconds: Double = 10) -> String? {
        let handle = output.fileHandleForReading
        let line = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var bytes: [UInt8] = []
            while true {
                let chunk = handle.readData(ofLength: 1)
                if chunk.isEmpty || chunk.first == 10 { break }
                bytes.append(chunk.first!)
            }
            line.withLock { $0 = String(decoding: bytes, as: UTF8.self) }
            done.signal()
        }
        if done.wait(timeout: .now() + seconds) == .timedOut { return nil }
        return line.withLock { $0 }
    }

    /// Waits for the child to exit within `seconds` (killing it otherwise); returns its status and output.
    func finish(seconds: Double = 30) -> (status: Int32, output: String, errors: String) {
        let done = DispatchSemaphore(value: 0)
        let collected = Mutex<(Data, Data)>((Data(), Data()))
        let output = self.output
        let errors = self.errors
        DispatchQueue.global().async {
            let out = output.fileHandleForReading.readDataToEndOfFile()
            let err = errors.fileHandleForReading.readDataToEndOfFile()
            collected.withLock { $0 = (out, err) }
            done.signal()
        }
        if done.wait(timeout: .now() + seconds) == .timedOut {
            process.terminate()
            _ = done.wait(timeout: .now() + 5)
        }
        process.waitUntilExit()
        let (out, err) = collected.withLock { $0 }
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    func kill() {
        if process.isRunning { process.terminate() }
    }
}

/// A self-signed certificate for 127.0.0.1 and localhost, made by the `openssl` command in a fresh folder that
/// the caller removes.
func makeSelfSignedCertificate() throws -> (certificate: String, key: String, folder: String) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-tls-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let certificate = folder.appendingPathComponent("cert.pem").path
    let key = folder.appendingPathComponent("key.pem").path
    let child = try ChildProcess([
        "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "2",
        "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ])
    let result = child.finish(seconds: 30)
    guard result.status == 0 else {
        throw TransportError(place: "openssl req", problem: result.errors)
    }
    return (certificate, key, folder.path)
}
