import Foundation
import Testing

/// `clubroom demo --no-ui` as a real process: the room comes alive, speakers take turns, hands go up, an invited
/// listener comes on stage and speaks, and SIGTERM leaves nothing behind.
@Suite(.timeLimit(.minutes(2))) struct HeadlessDemoTests {
    @Test func theRoomRunsAndStopsCleanly() throws {
        let scratch = try scratchDirectory("headless")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = Process()
        process.executableURL = try clubroomBinary()
        process.arguments = ["demo", "--no-ui", "--room-size", "6"]
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = scratch.appendingPathComponent("tmp").path
        environment["XDG_STATE_HOME"] = scratch.appendingPathComponent("state").path
        process.environment = environment
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.interrupt() } }
        let lines = LineCollector(output.fileHandleForReading)

        let joined = try lines.wait(timeout: 20) { $0.hasPrefix(#"{"event":"joined""#) }
        #expect(lines.all[joined].contains(#""self":{"id":"you","#))
        #expect(lines.all[joined].contains(#""role":"host""#))
        #expect(lines.all[joined].contains(#""topic":"Friday terminal hour""#))

        // The three speakers, each in turn: their line starts, then the server hears them (a level above zero,
        // measured from their audio).
        var next = joined
        for speaker in ["sam", "imogen", "callum"] {
            next = try lines.wait(from: next, timeout: 30) {
                $0.hasPrefix(#"{"event":"demo_line","peer":"\#(speaker)""#)
            }
            next = try lines.wait(from: next, timeout: 10) { (level(of: speaker, in: $0) ?? 0) > 0 }
        }
        let stageLines = lines.all.filter { $0.hasPrefix(#"{"event":"demo_line""#) }
        let speakers = stageLines.compactMap { $0.split(separator: "\"").dropFirst(7).first.map(String.init) }
        #expect(zip(speakers, speakers.dropFirst()).allSatisfy { $0 != $1 }, "\(speakers)")
        // One voice at a time: no `speakers` event has two people above zero.
        let levels = lines.all.filter { $0.hasPrefix(#"{"event":"speakers""#) }.map(loudPeers)
        #expect(levels.allSatisfy { $0.count <= 1 }, "\(levels.filter { $0.count > 1 })")

        // A listener raises a hand; you invite her; she accepts, unmutes and says her line.
        let hand = try lines.wait(timeout: 30) { $0.hasPrefix(#"{"event":"hand_raised","peer":"zoe""#) }
        input.fileHandleForWriting.write(Data(#"{"cmd":"invite","peer":"zoe"}"#.utf8 + [0x0A]))
        let invited = try lines.wait(from: hand, timeout: 10) {
            $0 == #"{"event":"invited","peer":"zoe","by":"you"}"#
        }
        let onStage = try lines.wait(from: invited, timeout: 10) {
            $0 == #"{"event":"role_changed","peer":"zoe","role":"speaker","by":"zoe"}"#
        }
        let unmuted = try lines.wait(from: onStage, timeout: 10) {
            $0 == #"{"event":"mute_changed","peer":"zoe","muted":false,"by":"zoe"}"#
        }
        let greeting = try lines.wait(from: unmuted, timeout: 20) {
            $0.hasPrefix(#"{"event":"demo_line","peer":"dara","clip":"dara-guest.wav""#)
        }
        let line = try lines.wait(from: greeting, timeout: 20) {
            $0.hasPrefix(#"{"event":"demo_line","peer":"zoe","clip":"zoe-invited.wav""#)
        }
        _ = try lines.wait(from: line, timeout: 10) { (level(of: "zoe", in: $0) ?? 0) > 0 }

        #expect(processes(withEnvironment: scratch.path) == [process.processIdentifier])
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        #expect(processes(withEnvironment: scratch.path).isEmpty)
        // The throwaway data directory is gone.
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.appendingPathComponent("tmp").path)
        #expect(left.isEmpty, "\(left)")
    }
}

/// The level a `speakers` line gives `peer`, if it names them.
func level(of peer: String, in line: String) -> Int? {
    speakerLevels(line)[peer]
}

/// The peers a `speakers` line gives a level above zero.
func loudPeers(_ line: String) -> [String] {
    speakerLevels(line).filter { $0.value > 0 }.keys.sorted()
}

/// The levels of a `speakers` line by peer; empty for any other line.
func speakerLevels(_ line: String) -> [String: Int] {
    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        object["event"] as? String == "speakers", let levels = object["levels"] as? [[String: Any]]
    else { return [:] }
    var result: [String: Int] = [:]
    for entry in levels {
        if let peer = entry["peer"] as? String, let value = entry["level"] as? Int { result[peer] = value }
    }
    return result
}
