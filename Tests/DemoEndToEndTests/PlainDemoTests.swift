import Foundation
import RoomTesting
import Testing

/// `clubroom demo --plain`: the demo room in line mode, as `clubroom join --plain` shows a room.
@Suite(.ownThread) struct PlainDemoTests {
    @Test(.timeLimit(.minutes(1))) func theDemoRunsInLineModeAndLeavesOnSlashLeave() throws {
        let scratch = try scratchDirectory("plain")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (process, input, lines) = try startDemo(
            in: scratch, arguments: ["--plain", "--room-size", "3", "--output", "null"])
        let joined = try lines.expect(timeout: 20) {
            $0.hasPrefix("You joined friday as Host (host).") && $0.hasSuffix("Type /help for the commands.")
        }
        send("/who", to: input)
        _ = try lines.expect(from: joined, timeout: 10) {
            // The demo's moderator sets the topic as the room opens: /who says it first once it is set.
            $0.hasPrefix("On stage: Host (host, muted, you)")
                || $0.hasPrefix("Topic: \"Friday terminal hour\". On stage: Host (host, muted, you)")
        }
        // The demo's links work while it runs, and the sentence says so rather than a lifetime it cannot keep.
        send("/link", to: input)
        _ = try lines.expect(from: joined, timeout: 10) {
            $0.hasPrefix("Invite link for ") && $0.contains(", while the demo runs: ws://127.0.0.1:")
        }
        // A host is asked first, as on the screen; the next line answers. The question says what leaving does
        // here: the room runs inside the demo, so it ends with it (it does not go on without a host).
        send("/leave", to: input)
        _ = try lines.expect(from: joined, timeout: 10) {
            $0
                == "Leave the demo? The room runs inside this program: leaving ends it for everyone, and the demo "
                + "with it. Type yes to leave, or anything else to cancel."
        }
        send("yes", to: input)
        _ = try lines.expect(from: joined, timeout: 10) { $0 == "You left the room." }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        #expect(!process.isRunning, "the demo did not end after /leave")
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(lines.all.allSatisfy { !$0.hasPrefix("{") }, "line mode prints sentences, not JSON")
    }

    @Test func plainAndNoUIExcludeEachOther() throws {
        let result = try runClubroom(["demo", "--plain", "--no-ui"])
        #expect(result.status == 2)
        #expect(result.firstErrorLine == "clubroom demo: '--no-ui' and '--plain' cannot be used together")
    }
}
