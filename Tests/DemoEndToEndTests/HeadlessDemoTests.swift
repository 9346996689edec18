import Foundation
import RoomTesting
import Testing

/// `clubroom demo --no-ui` as a real process: the room comes alive, speakers take turns, hands go up, an invited
/// listener comes on stage and speaks, bots react to the host, and the demo stops cleanly on SIGTERM and when the
/// room ends.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct HeadlessDemoTests {
    @Test func theRoomRunsAndStopsCleanly() throws {
        let scratch = try scratchDirectory("headless")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (process, input, lines) = try startHeadlessDemo(in: scratch)
        defer { if process.isRunning { process.interrupt() } }

        let joined = try lines.expect(timeout: 20) { $0.hasPrefix(#"{"event":"joined""#) }
        #expect(lines.all[joined].contains(#""self":{"id":"you","#))
        #expect(lines.all[joined].contains(#""role":"host""#))
        #expect(lines.all[joined].contains(#""topic":"Friday terminal hour""#))

        // The three speakers, each in turn: their line starts, then the server hears them (a level above zero,
        // measured from their audio).
        var next = joined
        for speaker in ["sam", "imogen", "callum"] {
            next = try lines.expect(from: next, timeout: 30) {
                $0.hasPrefix(#"{"event":"demo_line","peer":"\#(speaker)""#)
            }
            next = try lines.expect(from: next, timeout: 10) { (level(of: speaker, in: $0) ?? 0) > 0 }
        }
        let stageLines = lines.all.filter { $0.hasPrefix(#"{"event":"demo_line""#) }
        let speakers = stageLines.compactMap { $0.split(separator: "\"").dropFirst(7).first.map(String.init) }
        #expect(zip(speakers, speakers.dropFirst()).allSatisfy { $0 != $1 }, "\(speakers)")
        // One voice at a time: no `speakers` event has two people above zero.
        let levels = lines.all.filter { $0.hasPrefix(#"{"event":"speakers""#) }.map(loudPeers)
        #expect(levels.allSatisfy { $0.count <= 1 }, "\(levels.filter { $0.count > 1 })")

        // A listener raises a hand; you invite her; she accepts, unmutes and says her line.
        let hand = try lines.expect(timeout: 30) { $0.hasPrefix(#"{"event":"hand_raised","peer":"zoe""#) }
        send(#"{"cmd":"invite","peer":"zoe"}"#, to: input)
        let invited = try lines.expect(from: hand, timeout: 10) {
            $0.hasPrefix(#"{"event":"invited","peer":"zoe","by":"you","at":"#)
        }
        let onStage = try lines.expect(from: invited, timeout: 10) {
            $0 == #"{"event":"role_changed","peer":"zoe","role":"speaker","by":"zoe"}"#
        }
        let unmuted = try lines.expect(from: onStage, timeout: 10) {
            $0 == #"{"event":"mute_changed","peer":"zoe","muted":false,"by":"zoe"}"#
        }
        let greeting = try lines.expect(from: unmuted, timeout: 20) {
            $0.hasPrefix(#"{"event":"demo_line","peer":"dara","clip":"dara-guest.wav""#)
        }
        let line = try lines.expect(from: greeting, timeout: 20) {
            $0.hasPrefix(#"{"event":"demo_line","peer":"zoe","clip":"zoe-invited.wav""#)
        }
        _ = try lines.expect(from: line, timeout: 10) { (level(of: "zoe", in: $0) ?? 0) > 0 }

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

    @Test func botsReactToTheHostAndEndingTheRoomEndsTheDemo() throws {
        let scratch = try scratchDirectory("reactions")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (process, input, lines) = try startHeadlessDemo(in: scratch)
        defer { if process.isRunning { process.interrupt() } }

        let samSpeaks = try lines.expect(timeout: 30) { $0.hasPrefix(#"{"event":"demo_line","peer":"sam""#) }
        // Imogen goes back to the audience and Sam is removed, mid-sentence.
        send(#"{"cmd":"set_role","peer":"imogen","role":"audience"}"#, to: input)
        send(#"{"cmd":"remove","peer":"sam","reason":"testing"}"#, to: input)
        // Generous waits: the whole suite starts at once, and this process runs a server and some thirty bots.
        let moved = try lines.expect(from: samSpeaks, timeout: 30) {
            $0 == #"{"event":"role_changed","peer":"imogen","role":"audience","by":"you"}"#
        }
        let removed = try lines.expect(from: samSpeaks, timeout: 30) {
            $0 == #"{"event":"removed","peer":"sam","by":"you","reason":"testing"}"#
        }
        // Callum carries on alone: two lines of his in a row, nobody else's.
        let first = try lines.expect(from: max(moved, removed), timeout: 20) {
            $0.hasPrefix(#"{"event":"demo_line""#)
        }
        #expect(lines.all[first].hasPrefix(#"{"event":"demo_line","peer":"callum""#), "\(lines.all[first])")
        let second = try lines.expect(from: first + 1, timeout: 20) { $0.hasPrefix(#"{"event":"demo_line""#) }
        #expect(lines.all[second].hasPrefix(#"{"event":"demo_line","peer":"callum""#), "\(lines.all[second])")
        let quiet = lines.all[first...].filter { line in
            ["sam", "imogen"].contains { (level(of: $0, in: line) ?? 0) > 0 }
        }
        #expect(quiet.isEmpty, "\(quiet)")

        // Ending the room ends the demo by itself.
        send(#"{"cmd":"end_room","reason":"that is all"}"#, to: input)
        _ = try lines.expect(from: second, timeout: 10) {
            $0 == #"{"event":"room_ended","by":"you","reason":"that is all"}"#
        }
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        #expect(!process.isRunning)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(processes(withEnvironment: scratch.path).isEmpty)
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

/// Starts `clubroom demo --no-ui` with its temporary and state directories in `scratch`.
func startHeadlessDemo(in scratch: URL) throws -> (Process, Pipe, LineCollector) {
    try startDemo(in: scratch, arguments: ["--no-ui", "--room-size", "6"])
}
