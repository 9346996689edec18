import Foundation
import RoomClient
import RoomCore
import RoomProtocol
import RoomTesting
import RoomTransport
import Testing

/// The server runs a recorder when a host asks (`--recorder` stands in for `clubroom record` here): with a link it
/// writes for it, into `DATA/recordings/ROOM-…opus`; it stops it, starts it again when it dies, and gives up, telling
/// the hosts, when it keeps failing at once.
@Suite(.ownThread, .serialized) struct RecorderSupervisionTests {
    /// Writes an executable shell script and returns its path.
    func script(_ body: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("recorder-\(UUID().uuidString).sh")
            .path
        try writeScript("#!/bin/sh\n" + body + "\n", to: path)
        return path
    }

    /// Each start of the stand-in appends its arguments to `recordings/attempts`.
    let noteAttempt = #"dir=$(dirname "$4"); echo "$*" >> "$dir/attempts""#

    func attempts(_ server: ServerProcess) -> [String] {
        let text = (try? String(contentsOfFile: server.dataDirectory + "/recordings/attempts", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    func recordingEvent(_ seen: SessionRecorder, active: Bool) -> WireEvent? {
        let event = seen.wait(timeout: 15) {
            if case .message(let message) = $0, case .recording(let state, _, _) = message.event {
                return (state != nil) == active
            }
            return false
        }
        guard case .message(let message)? = event else { return nil }
        return message.event
    }

    @Test(.timeLimit(.minutes(1))) func aHostStartsAndStopsTheServersRecorder() throws {
        let binary = try clubroomBinary().path
        // A stand-in that joins as the recorder does: with the link it is given, as a bot that only listens.
        let joiner = try script(
            noteAttempt + "\n"
                + #"link=$(cat "$2"); fifo="$dir/stdin-$$"; mkfifo "$fifo"; exec 3<>"$fifo"; rm -f "$fifo""#
                + "\n" + #"exec "\#(binary)" bot "${link%%#*}" --token "${link#*#invite=}" <&3"#)
        let server = try ServerProcess(extraArguments: ["--recorder", joiner])
        defer { server.stopAndClean() }
        let (host, hostSeen) = try session(
            server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz"))
        defer { host.shutdown() }
        let (listener, listenerSeen) = try session(
            server, room: "jazz", token: try server.token("eli", role: "audience", room: "jazz"))
        defer { listener.shutdown() }
        _ = host.send(.startRecording, id: .integer(1))
        for seen in [hostSeen, listenerSeen] {
            guard case .recording(let state?, _, _)? = recordingEvent(seen, active: true) else {
                Issue.record("no recording started; server log: \(server.log.all)")
                return
            }
            #expect(state.by == "recorder")
        }
        let started = attempts(server)
        #expect(started.count == 1, "\(started)")
        let words = started.first?.split(separator: " ").map(String.init) ?? []
        #expect(words.count == 6, "\(words)")
        if words.count == 6 {
            let folder = server.dataDirectory + "/recordings/"
            #expect(words[0] == "--link-file" && words[2] == "--out" && words[4] == "--started-by")
            #expect(words[5] == "ana")
            #expect(words[1].hasPrefix(folder + "jazz-") && words[1].hasSuffix("Z.link"))
            #expect(words[3].hasPrefix(folder + "jazz-") && words[3].hasSuffix("Z.opus"))
            // jazz-YYYYMMDDTHHMMSSZ.opus
            #expect(words[3].dropFirst(folder.count).count == "jazz-20261206T050000Z.opus".count)
            let mode = (try? FileManager.default.attributesOfItem(atPath: words[1])[.posixPermissions]) as? Int
            #expect(mode == 0o600)
            #expect(
                (try? String(contentsOfFile: words[1], encoding: .utf8))?.hasPrefix(
                    "ws://127.0.0.1:\(server.port)/rooms/jazz#invite=") == true)
            _ = host.send(.stopRecording, id: .integer(2))
            #expect(recordingEvent(listenerSeen, active: false) == .recording(nil, by: "ana", reason: nil))
            #expect(
                waitUntil(limit: 15, every: 0.05) { !FileManager.default.fileExists(atPath: words[1]) },
                "the link file stays")
        }
        #expect(
            waitUntil(limit: 15, every: 0.05) {
                !server.logLines(containing: "room jazz: recording stopped by ana").isEmpty
            })
        #expect(!server.logLines(containing: "room jazz: recording started by ana").isEmpty)
    }

    /// The whole loop with the real recorder (`clubroom record`, the server's own program): a host starts it,
    /// everyone is told, its file grows while it records, and stopping it leaves a complete file.
    @Test(.timeLimit(.minutes(1))) func theServersOwnRecorderKeepsTheRoomUntilStopped() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        let (host, hostSeen) = try session(
            server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz", name: "Ana"))
        defer { host.shutdown() }
        let (listener, listenerSeen) = try session(
            server, room: "jazz", token: try server.token("eli", role: "audience", room: "jazz"))
        defer { listener.shutdown() }
        _ = host.send(.startRecording, id: .integer(1))
        for seen in [hostSeen, listenerSeen] {
            guard case .recording(let state?, _, _)? = recordingEvent(seen, active: true) else {
                Issue.record("no recording started; server log: \(server.log.all)")
                return
            }
            #expect(state.by == "ana")
        }
        let folder = server.dataDirectory + "/recordings"
        func recording() -> String? {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return names.first { $0.hasPrefix("jazz-") && $0.hasSuffix("Z.opus") }.map { folder + "/" + $0 }
        }
        func size(_ path: String) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.intValue ?? 0
        }
        #expect(waitUntil(limit: 15, every: 0.05) { recording() != nil }, "no file in \(folder)")
        guard let file = recording() else { return }
        #expect(waitUntil(limit: 15, every: 0.05) { size(file) > 0 })
        let first = size(file)
        #expect(waitUntil(limit: 15, every: 0.05) { size(file) > first }, "the file does not grow past \(first) bytes")
        _ = host.send(.stopRecording, id: .integer(2))
        #expect(recordingEvent(listenerSeen, active: false) == .recording(nil, by: "ana", reason: nil))
        #expect(
            waitUntil(limit: 15, every: 0.05) { !server.logLines(containing: "is complete").isEmpty },
            "\(server.log.all)")
        let record = String(file.dropLast(".opus".count)) + ".json"
        let text = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
        #expect(text.contains(#""complete":true"#), "\(text)")
        let info = spawnAndWait("opusinfo", [file])
        #expect(info.status == 0)
        // The room has no topic: the file says its room, and no empty topic.
        #expect(info.output.contains("ROOM=jazz"), "\(info.output)")
        #expect(!info.output.contains("TOPIC="), "\(info.output)")
        #expect(!FileManager.default.fileExists(atPath: String(file.dropLast(".opus".count)) + ".link"))
        // The recorder's log says who stopped it, not that it was removed.
        let said = recorderLog(of: file)
        #expect(said.contains("the recording ended because it was stopped by Ana.\n"), "\(said)")
        #expect(!said.contains("removed"), "\(said)")
    }

    /// A server on every address behind TLS mints its own recorder's link for a name its certificate has (here
    /// `localhost` alone, as a real certificate names its host and no address) and that reaches it from this
    /// machine: the recorder checks the certificate, joins, and the recording starts and grows.
    @Test(.timeLimit(.minutes(1))) func behindTLSOnEveryAddressTheServersOwnRecorderRecords() throws {
        let (certificate, key, folder) = try makeSelfSignedCertificate(names: "DNS:localhost")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try ServerProcess(
            host: "0.0.0.0", extraArguments: ["--tls-cert", certificate, "--tls-key", key],
            environment: ["SSL_CERT_FILE": certificate])
        defer { server.stopAndClean() }
        let (host, hostSeen) = try session(
            server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz", name: "Ana"),
            url: "wss://localhost:\(server.port)/rooms/jazz", tls: TLSClientConfiguration(caFile: certificate))
        defer { host.shutdown() }
        guard let file = recordingStarted(server, host: host, hostSeen) else {
            Issue.record("no recording started; server log: \(server.log.all)")
            return
        }
        let link = String(file.dropLast(".opus".count)) + ".link"
        #expect(
            (try? String(contentsOfFile: link, encoding: .utf8))?.hasPrefix(
                "wss://localhost:\(server.port)/rooms/jazz#invite=") == true)
        func size() -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: file)[.size]) as? NSNumber)?.intValue ?? 0
        }
        #expect(waitUntil(limit: 15, every: 0.05) { size() > 0 }, "\(recorderLog(of: file))")
        _ = host.send(.stopRecording, id: .integer(2))
        #expect(
            waitUntil(limit: 15, every: 0.05) { !server.logLines(containing: "is complete").isEmpty },
            "\(server.log.all)")
    }

    /// What the server's recorder of `file` wrote to its standard error: the `.log` beside the file.
    func recorderLog(of file: String) -> String {
        (try? String(contentsOfFile: String(file.dropLast(".opus".count)) + ".log", encoding: .utf8)) ?? ""
    }

    /// Starts the server's own recorder in room jazz, and returns the file it records into once it grows.
    func recordingStarted(_ server: ServerProcess, host: RoomSession, _ hostSeen: SessionRecorder) -> String? {
        _ = host.send(.startRecording, id: .integer(1))
        guard recordingEvent(hostSeen, active: true) != nil else { return nil }
        let folder = server.dataDirectory + "/recordings"
        func recording() -> String? {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return names.first { $0.hasPrefix("jazz-") && $0.hasSuffix("Z.opus") }.map { folder + "/" + $0 }
        }
        _ = waitUntil(limit: 15, every: 0.05) { recording() != nil }
        return recording()
    }

    @Test(.timeLimit(.minutes(1))) func theRecordersLogSaysTheRoomEndedWhenItDid() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        let (host, hostSeen) = try session(
            server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz", name: "Ana"))
        defer { host.shutdown() }
        guard let file = recordingStarted(server, host: host, hostSeen) else {
            Issue.record("no recording started; server log: \(server.log.all)")
            return
        }
        _ = host.send(.endRoom(reason: "done"), id: .integer(2))
        #expect(
            waitUntil(limit: 15, every: 0.05) { !server.logLines(containing: "is complete").isEmpty },
            "\(server.log.all)")
        let said = recorderLog(of: file)
        #expect(said.contains("the recording ended because the room ended.\n"), "\(said)")
        #expect(!said.contains("removed"), "\(said)")
    }

    @Test(.timeLimit(.minutes(1))) func theRecordersLogSaysTheServerStoppedWhenItDid() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        let (host, hostSeen) = try session(
            server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz", name: "Ana"))
        defer { host.shutdown() }
        guard let file = recordingStarted(server, host: host, hostSeen) else {
            Issue.record("no recording started; server log: \(server.log.all)")
            return
        }
        server.stop()
        #expect(
            waitUntil(limit: 15, every: 0.05) { recorderLog(of: file).contains("the recording ended because") },
            "\(server.log.all)")
        let said = recorderLog(of: file)
        #expect(said.contains("the recording ended because the server stopped.\n"), "\(said)")
        #expect(!said.contains("removed"), "\(said)")
    }

    /// A stand-in like the one above: joins with the link it is given and leaves on SIGTERM.
    func joiner() throws -> String {
        let binary = try clubroomBinary().path
        return try script(
            noteAttempt + "\n"
                + #"link=$(cat "$2"); fifo="$dir/stdin-$$"; mkfifo "$fifo"; exec 3<>"$fifo"; rm -f "$fifo""#
                + "\n" + #"exec "\#(binary)" bot "${link%%#*}" --token "${link#*#invite=}" <&3"#)
    }

    @Test(.timeLimit(.minutes(1))) func removingTheRecorderStopsTheRecordingAndTheRoomMayBeRecordedAgain() throws {
        let server = try ServerProcess(extraArguments: ["--recorder", try joiner()])
        defer { server.stopAndClean() }
        let (host, hostSeen) = try session(
            server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz"))
        defer { host.shutdown() }
        _ = host.send(.startRecording, id: .integer(1))
        guard recordingEvent(hostSeen, active: true) != nil else {
            Issue.record("no recording started; server log: \(server.log.all)")
            return
        }
        _ = host.send(.remove("recorder", reason: "not now"), id: .integer(2))
        #expect(recordingEvent(hostSeen, active: false) == .recording(nil, by: "ana", reason: nil))
        #expect(
            waitUntil(limit: 15, every: 0.05) {
                !server.logLines(containing: "room jazz: recording stopped by ana").isEmpty
            })
        #expect(
            waitUntil(limit: 15, every: 0.05) { !server.logLines(containing: "is complete").isEmpty },
            "\(server.log.all)")
        _ = host.send(.startRecording, id: .integer(3))
        // Everyone is told it started again: a second `recording` that is active.
        let starts = {
            hostSeen.all.filter {
                if case .message(let message) = $0, case .recording(_?, _, _) = message.event { return true }
                return false
            }.count
        }
        #expect(waitUntil(limit: 15, every: 0.05) { starts() == 2 }, "\(server.log.all) \(hostSeen.all)")
        #expect(attempts(server).count == 2, "\(attempts(server))")
        #expect(server.logLines(containing: "keeps failing").isEmpty)
    }

    @Test(.timeLimit(.minutes(1))) func noRecordersLinkOutlivesTheServer() throws {
        let sleeper = try script(
            noteAttempt + "\n" + #"echo $$ >> "$dir/pids"; trap 'exit 0' TERM"# + "\n" + "while :; do sleep 0.05; done")
        let first = try ServerProcess(extraArguments: ["--recorder", sleeper])
        let folder = first.dataDirectory + "/recordings"
        func links() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".link") }
        }
        defer {
            // The crashed server's recorder is nobody's child any more.
            let pids = (try? String(contentsOfFile: folder + "/pids", encoding: .utf8)) ?? ""
            for pid in pids.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, SIGTERM) }
            first.stopAndClean()
        }
        let (host, _) = try session(first, room: "jazz", token: try first.token("ana", role: "host", room: "jazz"))
        _ = host.send(.startRecording, id: .integer(1))
        #expect(waitUntil(limit: 15, every: 0.05) { attempts(first).count == 1 })
        host.shutdown()
        first.crash()
        #expect(links().count == 1)
        // The next server removes what the crashed one left, and leaves nothing at its own stop.
        let second = try ServerProcess(directory: first.directory, extraArguments: ["--recorder", sleeper])
        defer { second.stop() }
        #expect(links() == [])
        let (again, _) = try session(second, room: "jazz", token: try second.token("ana", role: "host", room: "jazz"))
        defer { again.shutdown() }
        _ = again.send(.startRecording, id: .integer(1))
        #expect(waitUntil(limit: 15, every: 0.05) { attempts(second).count == 2 })
        #expect(links().count == 1)
        second.stop()
        #expect(links() == [], "\(second.log.all)")
    }

    @Test(.timeLimit(.minutes(1))) func aRecorderThatKeepsFailingAtOnceIsGivenUp() throws {
        let failer = try script(noteAttempt + "\nexit 1")
        let server = try ServerProcess(extraArguments: ["--recorder", failer])
        defer { server.stopAndClean() }
        let (host, hostSeen) = try session(
            server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz"))
        defer { host.shutdown() }
        _ = host.send(.startRecording, id: .integer(1))
        let told = hostSeen.wait(timeout: 20) {
            if case .message(let message) = $0, case .error(.recording, _, nil) = message.event { return true }
            return false
        }
        guard case .message(let message)? = told, case .error(_, let text, _) = message.event else {
            Issue.record("the host was not told; server log: \(server.log.all)")
            return
        }
        #expect(text == "The recorder keeps failing at once (it exited with status 1); the recording stopped.")
        #expect(attempts(server).count == RecorderLimits.maxQuickFailures)
        // The log comes through a pipe and may follow the message.
        #expect(
            waitUntil(limit: 10, every: 0.05) {
                !server.logLines(containing: "times at once; not started again").isEmpty
            })
        // Given up means given up: no attempt follows.
        usleep(2_500_000)
        #expect(attempts(server).count == RecorderLimits.maxQuickFailures)
    }

    @Test(.timeLimit(.minutes(1))) func theEndOfTheRoomStopsTheRecorderWithSIGTERM() throws {
        let sleeper = try script(
            noteAttempt + "\n" + #"trap 'echo stopped >> "$dir/attempts"; exit 0' TERM"# + "\n"
                + "while :; do sleep 0.05; done")
        let server = try ServerProcess(extraArguments: ["--recorder", sleeper])
        defer { server.stopAndClean() }
        let (host, _) = try session(server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz"))
        defer { host.shutdown() }
        _ = host.send(.startRecording, id: .integer(1))
        #expect(waitUntil(limit: 15, every: 0.05) { attempts(server).count == 1 })
        _ = host.send(.endRoom(reason: "done"), id: .integer(2))
        #expect(waitUntil(limit: 15, every: 0.05) { attempts(server).last == "stopped" }, "\(attempts(server))")
        #expect(
            waitUntil(limit: 15, every: 0.05) { !server.logLines(containing: "exited with status 0").isEmpty },
            "\(server.log.all)")
    }
}

/// The supervisor's rule, as its tests need it without reaching into the server.
enum RecorderLimits {
    static let maxQuickFailures = 3
}
