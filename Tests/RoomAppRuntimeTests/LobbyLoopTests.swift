import Foundation
import RoomApp
import RoomAppRuntime
import RoomCore
import RoomTesting
import RuntimeTesting
import Testing

@testable import TermUI

let jazz = RoomListing(
    room: "jazz", topic: "Late night jazz", stage: [.init(name: "Ana", role: .host)], onStage: 1, listeners: 4,
    raisedHands: 0, startedAt: t0 - 60_000)

/// Waits up to `seconds` for `condition`.
func soon(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

@Suite(.ownThread) struct LobbyScreenLoopTests {
    /// The lobby draws the list, Enter runs the room on the same screen, `q` in the room comes back (the
    /// lobby connects again and draws the list), and `q` in the lobby quits.
    @Test(.timeLimit(.minutes(1))) func enterJoinsAndQComesBack() throws {
        let lobbyConnection = ScriptedLobbyConnection { $0.deliver(.rooms([jazz])) }
        let sink = HeadlessSink(width: 80, height: 24)
        let entered = Lines()
        let roomConnection = ScriptedConnection {
            $0.deliver(.server(.joined(snapshot(selfID: "hana")), seq: 5, at: t0))
        }
        let loop = try LobbyScreenLoop(
            state: LobbyState(server: "rooms.example.org"), connect: { lobbyConnection }, theme: Theme(level: .none),
            clock: { t0 }
        ) { room, sink in
            entered.append(room.room)
            let roomLoop = try? ScreenLoop(
                state: AppState(roles: roles), connection: roomConnection, theme: Theme(level: .none), clock: { t0 })
            return roomLoop?.run(on: sink) == .left ? nil : "failed"
        }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let unsafeLoop = loop
        Thread {
            _ = unsafeLoop.run(on: sink)
            done.signal()
        }.start()
        #expect(soon { sink.lines.contains { $0.contains("Late night jazz") && $0.contains("4 listening") } })
        sink.press(.enter)
        #expect(soon { sink.lines.contains { $0.contains("you: Hana · listener") } }, "\(sink.lines)")
        #expect(entered.all == ["jazz"])
        sink.press(.char("q"))
        #expect(soon { sink.lines.contains { $0.contains("Live rooms (1)") } }, "\(sink.lines)")
        #expect(roomConnection.sent == [.leave])
        #expect(lobbyConnection.starts == 2)
        sink.press(.char("r"))
        #expect(soon { lobbyConnection.refreshes == 1 })
        sink.press(.char("q"))
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(loop.state.quitting)
    }

    /// A room that refuses the person sends them back with why.
    @Test(.timeLimit(.minutes(1))) func aRefusedRoomIsSaidInTheLobby() throws {
        let lobbyConnection = ScriptedLobbyConnection { $0.deliver(.rooms([jazz])) }
        let sink = HeadlessSink(width: 80, height: 24)
        let loop = try LobbyScreenLoop(
            state: LobbyState(server: "rooms.example.org"), connect: { lobbyConnection }, theme: Theme(level: .none),
            clock: { t0 }
        ) { _, _ in "The room this link is for has ended." }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let unsafeLoop = loop
        Thread {
            _ = unsafeLoop.run(on: sink)
            done.signal()
        }.start()
        #expect(soon { sink.lines.contains { $0.contains("Late night jazz") } })
        sink.press(.enter)
        #expect(soon { sink.lines.contains { $0.contains("! The room this link is for has ended.") } }, "\(sink.lines)")
        loop.requestStop()
        #expect(done.wait(timeout: .now() + 5) == .success)
    }
}

@Suite(.ownThread) struct LobbyPlainLoopTests {
    /// Line mode: the list as sentences, a number joins, the room reads the next lines, `/leave` comes back,
    /// and the end of input leaves the lobby.
    @Test(.timeLimit(.minutes(1))) func aNumberJoinsAndLeaveComesBack() throws {
        let lobbyConnection = ScriptedLobbyConnection { $0.deliver(.rooms([jazz])) }
        let output = Lines()
        let script = Script(["1", "/who", "/leave", "/quit"])
        // Each line waits a moment, as a person typing would; the room is open by the time "/who" is read.
        let lines = LineSource {
            usleep(150_000)
            return script.next()
        }
        let roomConnection = ScriptedConnection {
            $0.deliver(.server(.joined(snapshot(selfID: "hana")), seq: 5, at: t0))
        }
        let loop = try LobbyPlainLoop(
            state: LobbyState(server: "rooms.example.org", lineMode: true), connect: { lobbyConnection },
            lines: lines, output: { output.append($0) }, clock: { t0 }
        ) { room, input in
            output.append("[entering \(room.room)]")
            let roomLoop = try? PlainLoop(
                state: AppState(roles: roles, lineMode: true), connection: roomConnection,
                output: { output.append($0) }, clock: { t0 })
            return roomLoop?.run(input: input) == .left ? nil : "failed"
        }
        #expect(loop.run() == .quit)
        let said = output.all
        #expect(
            said.first?.hasPrefix(
                "Lobby of rooms.example.org. 1 live room, most listeners first:\n1. Late night jazz (jazz): 4 listening; on stage: Ana (host); started 1 minute ago."
            ) == true, "\(said)")
        #expect(said.contains("Joining Late night jazz (jazz)."))
        #expect(said.contains("[entering jazz]"))
        #expect(said.contains("On stage: Ana (host, live). No raised hands. Listening (3): Eli, Hana, Ivo."), "\(said)")
        #expect(said.contains("Back in the lobby, from jazz."))
        #expect(said.last == "Leaving the lobby.")
        #expect(roomConnection.sent == [.leave])
        #expect(lobbyConnection.starts == 2)
    }

    @Test func aLineSourceHandsEachLineToTheCurrentReaderOnly() {
        let script = Script(["a", "b"])
        let gate = DispatchSemaphore(value: 0)
        let lines = LineSource {
            gate.wait()
            return script.next()
        }
        let first = lines.current
        gate.signal()
        #expect(lines.next(first) == .line("a"))
        let second = lines.advance()
        #expect(lines.next(first) == .detached)
        gate.signal()
        #expect(lines.next(second) == .line("b"))
        gate.signal()
        #expect(lines.next(second) == .end)
    }
}
