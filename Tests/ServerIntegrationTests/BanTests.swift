import Foundation
import RoomClient
import RoomCore
import RoomProtocol
import RoomTesting
import Testing

/// The reason a session was refused with, when it was.
private func refusalReason(_ recorder: SessionRecorder) -> String? {
    for event in recorder.all {
        if case .ended(.refused(_, let reason)) = event { return reason }
    }
    return nil
}

/// The `bans` answer to request `id`.
private func bansAnswer(_ seen: SessionRecorder, id: Int64) -> (bans: [RoomBan], lifted: [String])? {
    let answer = seen.wait {
        if case .message(let message) = $0, case .bans(_, _, .integer(id)) = message.event { return true }
        return false
    }
    guard case .message(let message)? = answer, case .bans(let bans, let lifted, _) = message.event else {
        return nil
    }
    return (bans, lifted)
}

/// Runs `clubroom bans` on the server's data folder.
private func bans(_ server: ServerProcess, _ arguments: [String] = []) throws -> ProcessResult {
    try ChildProcess(executable: server.binary, arguments: ["bans", "--data", server.dataDirectory] + arguments)
        .finish()
}

/// Lasting bans (issue 27): a host's `/ban` removes someone and keeps their identity out of the server's rooms,
/// across a restart, until the ban is lifted.
@Suite(.serialized) struct BanTests {
    @Test(.timeLimit(.minutes(3))) func aBanRemovesAndKeepsOutAcrossARestartUntilLifted() throws {
        var server = try ServerProcess()
        defer { server.stopAndClean() }
        let (host, hostSeen) = try joinedSession(server, "ana", role: "host")
        let (speaker, speakerSeen) = try joinedSession(server, "cy", role: "speaker")
        let boToken = try server.token("bo", role: "audience", name: "Bo")
        let (bo, boSeen) = try session(server, room: "lobby", token: boToken)
        #expect(snapshot(boSeen) != nil, "\(boSeen.all)")

        // A speaker may not ban.
        speaker.send(.remove("bo", reason: nil, ban: true), id: .integer(1))
        #expect(
            speakerSeen.wait {
                if case .message(let message) = $0, case .error(.forbidden, _, .integer(1)) = message.event {
                    return true
                }
                return false
            } != nil, "\(speakerSeen.all)")
        #expect(try bans(server).standardOutput == "No bans.\n")

        host.send(.remove("bo", reason: "spam", ban: true), id: .integer(2))
        #expect(boSeen.wait { $0 == .ended(.removed) } != nil, "\(boSeen.all)")
        bo.shutdown()
        #expect(
            hostSeen.wait {
                if case .message(let message) = $0, case .removed("bo", "ana", "spam") = message.event { return true }
                return false
            } != nil)
        let (again, againSeen) = try session(server, room: "lobby", token: boToken)
        again.shutdown()
        #expect(refusal(againSeen) == 4025, "\(againSeen.all)")
        #expect(refusalReason(againSeen) == "You are banned from this server's rooms.")
        #expect(
            Refusals.describe(code: 4025, reason: "", withInvite: false)
                == "You are banned from this server's rooms. Only its hosts or its operator can lift the ban.")
        let listed = try bans(server)
        #expect(listed.status == 0)
        let lines = listed.standardOutput.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("IDENTITY  NAME  BY   ROOM   WHEN (UTC)") == true, "\(listed.standardOutput)")
        #expect(lines.last?.hasPrefix("bo        Bo    ana  lobby  ") == true, "\(listed.standardOutput)")
        #expect(lines.last?.hasSuffix("  spam") == true)
        speaker.shutdown()
        host.shutdown()

        server.stop()
        server = try ServerProcess(directory: server.directory)
        let (afterRestart, afterRestartSeen) = try session(server, room: "lobby", token: boToken)
        afterRestart.shutdown()
        #expect(refusal(afterRestartSeen) == 4025, "\(afterRestartSeen.all)")
        // Any room of the server, with any token.
        let (jazzHost, jazzHostSeen) = try session(
            server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz"))
        defer { jazzHost.shutdown() }
        #expect(snapshot(jazzHostSeen) != nil, "\(jazzHostSeen.all)")
        let boJazzToken = try server.token("bo", role: "speaker", room: "jazz", name: "Bo")
        let (jazz, jazzSeen) = try session(server, room: "jazz", token: boJazzToken)
        jazz.shutdown()
        #expect(refusal(jazzSeen) == 4025, "\(jazzSeen.all)")

        // A host lists the bans in a room and lifts one by the name the person had.
        jazzHost.send(.listBans, id: .integer(3))
        let listedInRoom = try #require(bansAnswer(jazzHostSeen, id: 3), "\(jazzHostSeen.all)")
        #expect(listedInRoom.bans.map(\.identity) == ["bo"])
        #expect(listedInRoom.bans.map(\.name) == ["Bo"])
        #expect(listedInRoom.bans.map(\.reason) == ["spam"])
        #expect(listedInRoom.lifted.isEmpty)
        jazzHost.send(.unban("nobody"), id: .integer(4))
        #expect(
            jazzHostSeen.wait {
                if case .message(let message) = $0, case .error(.notFound, _, .integer(4)) = message.event {
                    return true
                }
                return false
            } != nil, "\(jazzHostSeen.all)")
        jazzHost.send(.unban("Bo"), id: .integer(5))
        let unbanned = try #require(bansAnswer(jazzHostSeen, id: 5), "\(jazzHostSeen.all)")
        #expect(unbanned.bans.isEmpty)
        #expect(unbanned.lifted == ["bo"])
        let (back, backSeen) = try session(server, room: "jazz", token: boJazzToken)
        #expect(snapshot(backSeen) != nil, "\(backSeen.all)")

        // Banned again, in this room; the operator lifts it by the name.
        jazzHost.send(.remove("bo", reason: nil, ban: true), id: .integer(6))
        #expect(backSeen.wait { $0 == .ended(.removed) } != nil, "\(backSeen.all)")
        back.shutdown()
        let bannedAgain = try bans(server).standardOutput
        #expect(bannedAgain.contains("\nbo        Bo    ana  jazz  "), "\(bannedAgain)")
        let lifted = try bans(server, ["lift", "Bo"])
        #expect(lifted.status == 0)
        #expect(lifted.standardOutput == "Lifted the ban of bo: they may join the server's rooms again.\n")
        #expect(try bans(server, ["lift", "bo"]).status == 1)
        #expect(try bans(server).standardOutput == "No bans.\n")
        // The room the ban removed them from keeps them out until it ends, as a removal does.
        let (lobby, lobbySeen) = try session(server, room: "lobby", token: boToken)
        lobby.shutdown()
        #expect(refusal(lobbySeen) == 4012, "\(lobbySeen.all)")
    }
}
