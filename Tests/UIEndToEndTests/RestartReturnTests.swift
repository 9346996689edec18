import Foundation
import RoomTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 27 (M2): after a restart of the server, line mode said "While you were away: Ana left" of people who
/// were reconnecting like everyone else, and never said who came back. With real processes and kill -9.
@Suite(.ownThread, .serialized) struct RestartReturnTests {
    /// `clubroom serve` on `port` (0: any) with the data in `folder`; returns it and its port.
    private func serve(_ clubroom: URL, _ folder: URL, port: String = "0") throws -> (Child, String) {
        let server = try Child(
            clubroom,
            [
                "serve", "--listen", "127.0.0.1:\(port)", "--data", folder.appendingPathComponent("data").path,
                "--secret-file", folder.appendingPathComponent("secret").path,
            ])
        var found = ""
        let listening = eventually(15) {
            guard let range = server.errors.contents.range(of: "listening on ws://127.0.0.1:") else { return false }
            found = String(server.errors.contents[range.upperBound...].prefix(while: \.isNumber))
            return !found.isEmpty
        }
        guard listening else {
            server.stop()
            throw HarnessError("the server did not start: \(server.errors.contents)")
        }
        return (server, found)
    }

    @Test(.timeLimit(.minutes(2))) func afterKillNineTheMissingAreNotBackYetAndThenBack() throws {
        let clubroom = try clubroomExecutable()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-restart-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var children: [Child] = []
        defer {
            for child in children { child.stop() }
            try? FileManager.default.removeItem(at: folder)
        }
        let (first, port) = try serve(clubroom, folder)
        children.append(first)
        let secret = folder.appendingPathComponent("secret").path
        func token(_ identity: String, _ name: String, _ role: String) -> String {
            spawnAndWait(
                clubroom.path,
                [
                    "token", "--room", "jazz", "--identity", identity, "--name", name, "--role", role,
                    "--secret-file", secret,
                ]
            ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let url = "ws://127.0.0.1:\(port)/rooms/jazz"
        let ana = try Child(clubroom, ["bot", url, "--token", token("ana", "Ana", "host")])
        children.append(ana)
        #expect(eventually(10) { ana.output.contents.contains("\"joined\"") })
        let bo = try Child(
            clubroom, ["join", url, "--token", token("bo", "Bo", "audience"), "--plain", "--output", "null"])
        children.append(bo)
        #expect(eventually(10) { bo.output.contents.contains("You joined jazz as Bo") }, "\(bo.output.contents)")

        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        // Ana's bot is gone with the server (it will come back by itself, as a person would, a little later).
        ana.stop()
        let (second, _) = try serve(clubroom, folder, port: port)
        children.append(second)
        #expect(
            eventually(20) {
                bo.output.contents.contains("Reconnected. While you were away: Ana is not back yet.")
            }, "\(bo.output.contents)")
        let again = try Child(clubroom, ["bot", url, "--token", token("ana", "Ana", "host")])
        children.append(again)
        #expect(eventually(10) { bo.output.contents.contains("Ana is back.") }, "\(bo.output.contents)")
        #expect(!bo.output.contents.contains("Ana left"), "\(bo.output.contents)")
        #expect(!bo.output.contents.contains("Ana joined"), "\(bo.output.contents)")
        bo.write("/leave")
    }
}
