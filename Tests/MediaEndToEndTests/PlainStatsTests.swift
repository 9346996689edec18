import Foundation
import Testing

/// `/stats` in line mode against a real server: a host reads the table, a listener is told why not.
extension MediaEndToEndTests {
    @Test func aHostInLineModeReadsTheSpeakingTimeTableAndAListenerIsRefused() throws {
        let room = try TestServer(name: "plain-stats")
        let host = try room.join("hana", role: "host", input: "silence", output: "null")
        #expect(host.waitFor("You joined stage as hana"), "\(host.standardOutput)\(host.standardError)")
        let listener = try room.join("eli", role: "audience", input: "silence", output: "null")
        #expect(listener.waitFor("You joined stage as eli"))
        let speaker = try room.bot("ana", role: "speaker", ["--tone", "440"])
        #expect(host.waitFor("ana started speaking."), "\(host.standardOutput)")
        usleep(2_500_000)
        speaker.send("{\"cmd\":\"mute\",\"on\":true}")
        #expect(speaker.waitFor("\"mute_changed\",\"peer\":\"ana\",\"muted\":true"))
        host.send("/stats")
        listener.send("/stats")
        #expect(host.waitFor("Speaking time since the room went live, most first:"), "\(host.standardOutput)")
        #expect(host.waitUntil { !lines($0, containing: "  ana  0:0").isEmpty }, "\(host.standardOutput)")
        #expect(listener.waitFor("Only hosts and moderators can see how long each person has spoken."))
        speaker.finish()
        RunningProcess.finish([host, listener])
        _ = room.stop()
        // Ana talked about 2.5 s, in one turn; no one else spoke.
        let rows = lines(host.standardOutput, containing: "  ana  ")
        #expect(
            rows.count == 1 && (rows.first == "  ana  0:02  1 turn" || rows.first == "  ana  0:03  1 turn"), "\(rows)")
        #expect(lines(host.standardOutput, containing: "  hana  ").isEmpty)
        #expect(!listener.standardOutput.contains("Speaking time since"))
    }
}
