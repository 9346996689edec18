import Foundation
import RoomApp
import RoomAppRuntime
import RoomCore
import RoomTesting
import TermUI
import Testing

@testable import RuntimeTesting

/// The lobby → room → lobby hop and the signals, as `clubroom join` runs them, without a terminal: a scripted
/// lobby and room connection, and a screen in memory.
@Suite(.ownThread) struct LobbyFlowTests {
    /// Enter opens the room the flow's opener connects, on the lobby's screen; `q` leaves it and the lobby comes
    /// back with its list; `q` quits.
    @Test(.timeLimit(.minutes(1))) func theScreenWalksFromTheLobbyToARoomAndBack() throws {
        let lobbyConnection = ScriptedLobbyConnection { $0.deliver(.rooms([jazz])) }
        let roomConnection = ScriptedConnection {
            $0.deliver(.server(.joined(snapshot(selfID: "hana")), seq: 5, at: t0))
        }
        let opened = Lines()
        let flow = LobbyFlow(roles: roles, clock: { t0 }) { room in
            opened.append(room.room)
            return .success(roomConnection)
        }
        let sink = HeadlessSink(width: 80, height: 24)
        let run = try LobbyRun(
            flow.screen(
                state: LobbyState(server: "rooms.example.org"), connect: { lobbyConnection }, theme: Theme(level: .none)
            ),
            on: sink)
        #expect(soon { sink.lines.contains { $0.contains("Late night jazz") } }, "\(sink.lines)")
        #expect(!flow.inRoom)
        sink.press(.enter)
        #expect(soon { sink.lines.contains { $0.contains("you: Hana · listener") } }, "\(sink.lines)")
        #expect(flow.inRoom)
        #expect(opened.all == ["jazz"])
        sink.press(.char("q"))
        #expect(soon { sink.lines.contains { $0.contains("Live rooms (1)") } }, "\(sink.lines)")
        #expect(!flow.inRoom)
        #expect(roomConnection.sent == [.leave])
        #expect(lobbyConnection.starts == 2)
        sink.press(.char("q"))
        #expect(run.outcome() == .quit)
    }

    /// A signal while a room is open leaves the room (the server hears the leave) and then the lobby, which does
    /// not connect again.
    @Test(.timeLimit(.minutes(1))) func aSignalInARoomLeavesTheRoomAndTheLobby() throws {
        let lobbyConnection = ScriptedLobbyConnection { $0.deliver(.rooms([jazz])) }
        let roomConnection = ScriptedConnection {
            $0.deliver(.server(.joined(snapshot(selfID: "hana")), seq: 5, at: t0))
        }
        let flow = LobbyFlow(roles: roles, clock: { t0 }) { _ in .success(roomConnection) }
        let sink = HeadlessSink(width: 80, height: 24)
        let run = try LobbyRun(
            flow.screen(
                state: LobbyState(server: "rooms.example.org"), connect: { lobbyConnection }, theme: Theme(level: .none)
            ),
            on: sink)
        #expect(soon { sink.lines.contains { $0.contains("Late night jazz") } })
        sink.press(.enter)
        #expect(soon { flow.inRoom })
        flow.stop()
        #expect(run.outcome() == .quit)
        #expect(roomConnection.sent == [.leave])
        #expect(lobbyConnection.starts == 1)
        #expect(!flow.inRoom)
    }

    /// A room that cannot be opened is said in the lobby, which stays open.
    @Test(.timeLimit(.minutes(1))) func aRoomThatCannotOpenIsSaidInTheLobby() throws {
        let lobbyConnection = ScriptedLobbyConnection { $0.deliver(.rooms([jazz])) }
        let flow = LobbyFlow(roles: roles, clock: { t0 }) { _ in .failure(RoomUnavailable("No token for jazz.")) }
        let sink = HeadlessSink(width: 80, height: 24)
        let run = try LobbyRun(
            flow.screen(
                state: LobbyState(server: "rooms.example.org"), connect: { lobbyConnection }, theme: Theme(level: .none)
            ),
            on: sink)
        #expect(soon { sink.lines.contains { $0.contains("Late night jazz") } })
        sink.press(.enter)
        #expect(soon { sink.lines.contains { $0.contains("! No token for jazz.") } }, "\(sink.lines)")
        flow.stop()
        #expect(run.outcome() == .quit)
    }

    /// Line mode: Ctrl-C in a room (`stop(lobbyToo: false)`) comes back to the lobby; in the lobby it quits.
    @Test(.timeLimit(.minutes(1))) func ctrlCInALineModeRoomComesBackToTheLobby() throws {
        let lobbyConnection = ScriptedLobbyConnection { $0.deliver(.rooms([jazz])) }
        let roomConnection = ScriptedConnection {
            $0.deliver(.server(.joined(snapshot(selfID: "hana")), seq: 5, at: t0))
        }
        let flow = LobbyFlow(roles: roles, clock: { t0 }) { _ in .success(roomConnection) }
        let output = Lines()
        let input = Script(["1"])
        let gate = DispatchSemaphore(value: 0)
        let lines = LineSource {
            if let line = input.next() { return line }
            gate.wait()
            return nil
        }
        let lobby = try flow.lines(
            state: LobbyState(server: "rooms.example.org", lineMode: true), connect: { lobbyConnection },
            lines: lines, output: { output.append($0) })
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        nonisolated(unsafe) let unsafeLobby = lobby
        Thread {
            outcome.set(unsafeLobby.run())
            done.signal()
        }.start()
        #expect(
            soon { flow.inRoom && output.all.contains { $0.hasPrefix("You joined lobby as Hana") } }, "\(output.all)")
        flow.stop(lobbyToo: false)
        #expect(soon { output.all.contains("Back in the lobby, from jazz.") }, "\(output.all)")
        #expect(roomConnection.sent == [.leave])
        #expect(!flow.inRoom)
        flow.stop(lobbyToo: false)
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(outcome.value == .quit)
        #expect(lobbyConnection.starts == 2)
        #expect(roomConnection.sent == [.leave])
        gate.signal()
    }
}

/// A lobby's screen loop running on a thread of its own.
private final class LobbyRun: @unchecked Sendable {
    // @unchecked: `result` is written once by the loop's thread before `done` is signalled.
    private let done = DispatchSemaphore(value: 0)
    private var result: LobbyOutcome?

    init(_ loop: LobbyScreenLoop, on sink: HeadlessSink) {
        nonisolated(unsafe) let loop = loop
        Thread { [self] in
            result = loop.run(on: sink)
            done.signal()
        }.start()
    }

    /// How the run ended, waiting up to five seconds for it; nil when it did not end.
    func outcome() -> LobbyOutcome? {
        done.wait(timeout: .now() + 5) == .success ? result : nil
    }
}

/// A lobby outcome handed from the loop's thread.
private final class Outcome: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var stored: LobbyOutcome?
    func set(_ outcome: LobbyOutcome) { lock.withLock { stored = outcome } }
    var value: LobbyOutcome? { lock.withLock { stored } }
}

@Suite(.ownThread) struct LobbyOpensARoomTests {
    /// Issue 27: `n` in the lobby asks for a name and a topic, the server opens the room, and the lobby enters it
    /// with the host's link it was given: the person is the new room's host, on the same screen.
    @Test(.timeLimit(.minutes(1))) func nOpensARoomAndThePersonIsItsHost() throws {
        let lobbyConnection = ScriptedLobbyConnection(
            onStart: {
                $0.deliver(.welcome(openRooms: .hosts, mayOpen: true))
                $0.deliver(.rooms([]))
            },
            onOpen: { connection, request in
                connection.deliver(.opened(room: request.name, invite: "host-link-for-\(request.name)", id: request.id))
            })
        let roomConnection = ScriptedConnection {
            let host = RoomSnapshot(
                roomID: "jazz", topic: "Late night jazz", selfID: "hana",
                peers: [Peer(id: "hana", name: "Hana", role: .host, muted: true, joinedAt: 1)], seq: 1)
            $0.deliver(.server(.joined(host), seq: 1, at: t0))
        }
        let entered = Lines()
        let flow = LobbyFlow(roles: roles, clock: { t0 }) { entry in
            entered.append("\(entry.room) with \(entry.invite ?? "the lobby's link")")
            return .success(roomConnection)
        }
        let sink = HeadlessSink(width: 80, height: 24)
        let run = try LobbyRun(
            flow.screen(
                state: LobbyState(server: "rooms.example.org"), connect: { lobbyConnection }, theme: Theme(level: .none)
            ),
            on: sink)
        #expect(soon { sink.lines.contains { $0.contains("Press n to start a room") } }, "\(sink.lines)")
        sink.press(.char("n"))
        #expect(soon { sink.lines.contains { $0.contains("Open a room") } }, "\(sink.lines)")
        for character in "jazz" { sink.press(.char(character)) }
        sink.press(.enter)
        for character in "Late night jazz" { sink.press(.char(character)) }
        #expect(soon { sink.lines.contains { $0.contains("Topic: Late night jazz") } }, "\(sink.lines)")
        sink.press(.enter)
        #expect(soon { sink.lines.contains { $0.contains("you: Hana · host") } }, "\(sink.lines)")
        #expect(lobbyConnection.opens == [.init(name: "jazz", topic: "Late night jazz", id: "open-1")])
        #expect(entered.all == ["jazz with host-link-for-jazz"])
        #expect(flow.inRoom)
        flow.stop()
        #expect(run.outcome() == .quit)
    }
}
