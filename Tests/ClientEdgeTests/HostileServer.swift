import Foundation
import Glibc
import RoomProtocol
import RoomTesting
import RoomTransport
import StrictJSON
import Synchronization

/// A "room server" that attacks its clients: a real WebSocket server (the transport's own) that answers every
/// connection with a script of messages a hostile server or a man in the middle on `ws://` could send.
final class HostileServer: Sendable {
    let server: WebSocketServer

    /// Runs `script` on every connection as soon as it opens.
    init(script: @escaping @Sendable (WebSocketConnection) -> Void) throws {
        server = try WebSocketServer(
            host: "127.0.0.1", port: 0, handler: WebSocketServer.Handler(onOpen: { script($0) }))
    }

    var url: String { "ws://127.0.0.1:\(server.port)/rooms/lobby" }

    func shutdown() { server.shutdown() }

    static func send(_ connection: WebSocketConnection, _ event: WireEvent, seq: Int64?, raw: [String: String] = [:]) {
        var text = String(decoding: ControlCodec.encode(ServerMessage(event, seq: seq)), as: UTF8.self)
        // `Peer` and `ChatMessage` clean names and text as they are made, so a hostile name is written in by hand:
        // each string value equal to a key of `raw` is replaced by its value, JSON-escaped and nothing more.
        for (placeholder, hostile) in raw {
            text = text.replacingOccurrences(
                of: JSONValue.string(placeholder).encodedString, with: JSONValue.string(hostile).encodedString)
        }
        connection.send(text: text)
    }
}

/// A TCP server that answers one HTTP request with `response` and closes: a hostile server that refuses the
/// WebSocket upgrade with a status line of its own making.
final class RawHTTPServer: @unchecked Sendable {
    // @unchecked: the descriptor is set once; the thread only reads it.
    let port: Int
    private let listener: Int32
    private let thread: Thread

    init(response: [UInt8]) throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = listener
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard fd >= 0, bound == 0, named == 0, listen(fd, 4) == 0 else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        thread = Thread {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            var head: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
                let count = read(client, &buffer, buffer.count)
                if count <= 0 { break }
                head += buffer[..<count]
            }
            _ = response.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            close(client)
        }
        thread.start()
    }

    var url: String { "ws://127.0.0.1:\(port)/rooms/lobby" }

    func shutdown() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

/// The built `clubroom` run with a stdin the test holds open (so the client stays until the server is done with
/// it), its output collected.
final class ClientProcess: @unchecked Sendable {
    // @unchecked: the buffers are behind the mutex; the process and pipes are set once.
    let process = Process()
    private let input = Pipe()
    private let output = Mutex<(standardOutput: Data, standardError: Data)>((Data(), Data()))

    init(_ arguments: [String]) throws {
        process.executableURL = try clubroomBinary()
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardInput = input
        process.standardOutput = out
        process.standardError = err
        try process.run()
        out.fileHandleForReading.readToEnd { [self] data in output.withLock { $0.standardOutput += data } }
        err.fileHandleForReading.readToEnd { [self] data in output.withLock { $0.standardError += data } }
    }

    var standardOutput: Data { output.withLock { $0.standardOutput } }
    var standardError: Data { output.withLock { $0.standardError } }

    /// Waits up to `seconds` for the process to exit by itself; then kills it. Returns its status, nil if killed.
    func waitForExit(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        // Let the readers take the last of the pipes.
        usleep(100_000)
        return process.terminationStatus
    }

    func closeInput() {
        try? input.fileHandleForWriting.close()
    }
}

/// The characters a terminal acts on rather than prints: every control character but the newline between lines,
/// line and paragraph separators, bidirectional controls and invisible spaces.
func unsafeScalars(in text: String) -> [Unicode.Scalar] {
    text.unicodeScalars.filter { scalar in
        guard scalar != "\n" else { return false }
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        case .format:
            switch scalar.value {
            case 0x200B, 0x200E, 0x200F, 0x202A...0x202E, 0x2060...0x2069, 0xFEFF: return true
            default: return false
            }
        default: return false
        }
    }
}
