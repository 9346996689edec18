import Foundation
import RoomApp
import RoomAppRuntime
import RoomCore
import RoomTesting
import RuntimeTesting
import TermUI
import Testing

let roles: RoleTable = {
    let json = """
        {"version": 1, "roles": [
          {"name": "host", "label": "host", "rank": 0, "onStage": true, "permissions":
            ["publish_audio", "raise_hand", "chat", "invite", "move", "mute_others", "remove", "set_topic", "end_room"]},
          {"name": "moderator", "label": "mod", "rank": 1, "onStage": true, "permissions":
            ["publish_audio", "raise_hand", "chat", "invite", "move", "mute_others", "remove", "set_topic"]},
          {"name": "speaker", "label": "speaker", "rank": 2, "onStage": true, "permissions": ["publish_audio", "chat"]},
          {"name": "audience", "label": "listener", "rank": 3, "onStage": false, "permissions": ["raise_hand", "chat"]}
        ]}
        """
    do { return try RoleTable.parse(Data(json.utf8), source: "test") } catch { fatalError("\(error)") }
}()

let t0: Timestamp = 1_800_000_000_000

func snapshot(selfID: PeerID) -> RoomSnapshot {
    RoomSnapshot(
        roomID: "lobby", topic: "", selfID: selfID,
        peers: [
            Peer(id: "ana", name: "Ana", role: .host, muted: false, joinedAt: 1),
            Peer(id: "eli", name: "Eli"), Peer(id: "hana", name: "Hana"), Peer(id: "ivo", name: "Ivo"),
        ], seq: 5)
}

/// Collects output lines from any thread.
final class Lines: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

/// Input lines handed out one at a time, then the end of input.
final class Script: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var lines: [String]
    init(_ lines: [String]) { self.lines = lines }
    func next() -> String? { lock.withLock { lines.isEmpty ? nil : lines.removeFirst() } }
}

@Suite(.ownThread) struct PlainModeTests {
    @Test func eventsAreSentencesAndInputLinesAreCommands() throws {
        let connection = ScriptedConnection { connection in
            connection.deliver(.server(.joined(snapshot(selfID: "hana")), seq: 5, at: t0))
            connection.deliver(.server(.handRaised("eli", at: t0), seq: 6, at: t0))
            connection.deliver(.server(.invited("hana", by: "ana", at: t0), seq: 7, at: t0))
        }
        let lines = Lines()
        let loop = try PlainLoop(
            state: AppState(roles: roles, lineMode: true), connection: connection, output: { lines.append($0) },
            clock: { t0 })
        let script = Script(["/accept", "hello all", "/invite eli"])
        let speaking = connection
        // Levels arrive after the lines: Ana starting to speak is said once however many updates say so.
        let input: @Sendable () -> String? = {
            guard let line = script.next() else {
                for seq in UInt64(8)...10 {
                    speaking.deliver(
                        .server(.speakers([SpeakerLevel(peer: "ana", level: 70)]), seq: seq, at: t0))
                }
                return nil
            }
            return line
        }
        let outcome = loop.run(input: input)
        #expect(outcome == .left)
        #expect(
            lines.all == [
                "You joined lobby as Hana (listener). 4 people here: 1 on stage, 0 raised hands, 3 listening. "
                    + "Type /help for the commands.",
                "Eli raised their hand.",
                "Ana invited you to speak. Type /accept or /decline; say something first to check your microphone.",
                "Joining the stage muted; type /unmute when you want to talk.",
                "Only hosts and moderators can invite people to speak.",
                "Ana started speaking.",
                "You left the room.",
            ])
        #expect(connection.sent == [.acceptInvite, .chat("hello all", to: .everyone), .leave])
    }

    @Test func keptVolumesAreShownAndAVolumeSetGoesToTheConnectionNotTheServer() throws {
        let connection = ScriptedConnection { connection in
            connection.deliver(.volumes(["ana": 70]))
            connection.deliver(.server(.joined(snapshot(selfID: "hana")), seq: 5, at: t0))
        }
        let lines = Lines()
        let loop = try PlainLoop(
            state: AppState(roles: roles, lineMode: true), connection: connection, output: { lines.append($0) },
            clock: { t0 })
        let script = Script(["/volume ana", "/volume ana 40", "/who", "/volume eli 0"])
        #expect(loop.run(input: { script.next() }) == .left)
        #expect(
            lines.all == [
                "You joined lobby as Hana (listener). 4 people here: 1 on stage, 0 raised hands, 3 listening. "
                    + "Type /help for the commands.",
                "Ana sounds at 70 % to you.",
                "Ana now sounds at 40 % to you.",
                "On stage: Ana (host, live, 40 % for you). No raised hands. Listening (3): Eli, Hana, Ivo.",
                "Eli now sounds at 0 % to you (silent).",
                "You left the room.",
            ])
        #expect(connection.volumesSet == ["ana 40", "eli 0"])
        #expect(connection.sent == [.leave])
    }

    @Test func aFailedConnectionIsReportedAsFailure() throws {
        let connection = ScriptedConnection { $0.deliver(.sessionEnded("Cannot reach the room: refused.", at: t0)) }
        let lines = Lines()
        let loop = try PlainLoop(
            state: AppState(roles: roles, lineMode: true), connection: connection, output: { lines.append($0) },
            clock: { t0 })
        // The input never ends on its own here; the failure must end the loop.
        let outcome = loop.run(input: {
            sleep(60)
            return nil
        })
        #expect(outcome == .failed("Cannot reach the room: refused."))
        #expect(lines.all == ["Cannot reach the room: refused."])
    }
}

@Suite(.ownThread) struct DriverTests {
    /// Runs what the connection delivered, as a front end would.
    func settle(_ driver: RoomDriver) {
        for _ in 0..<50 {
            driver.applyPending()
            usleep(1000)
        }
    }

    @Test func theSoundIsToldWhatTheReducerSaysInOrder() throws {
        let connection = ScriptedConnection { connection in
            connection.deliver(.server(.joined(snapshot(selfID: "hana")), seq: 5, at: t0))
            connection.deliver(.server(.roleChanged("hana", to: .speaker, by: "ana"), seq: 6, at: t0))
            connection.deliver(.server(.muteChanged("hana", muted: false, by: "hana"), seq: 7, at: t0))
            connection.deliver(.server(.roleChanged("hana", to: .audience, by: "ana"), seq: 8, at: t0))
        }
        let driver = try RoomDriver(state: AppState(roles: roles), connection: connection, clock: { t0 })
        driver.start()
        settle(driver)
        #expect(connection.sound == [.setMuted(true), .openMicrophone, .setMuted(false), .closeMicrophone])
        #expect(connection.sent == [])
    }

    @Test func leavingIsAskedOfTheConnectionOnceAndTheRunEndsWithTheSession() throws {
        let connection = ScriptedConnection { $0.deliver(.server(.joined(snapshot(selfID: "hana")), seq: 5, at: t0)) }
        var said: [String] = []
        let driver = try RoomDriver(
            state: AppState(roles: roles, lineMode: true), connection: connection, clock: { t0 },
            say: { said.append($0) })
        driver.start()
        driver.applyPending()
        driver.dispatch(.interrupted(at: t0))
        driver.dispatch(.interrupted(at: t0))
        #expect(driver.quitting)
        #expect(driver.finish() == .left)
        #expect(connection.sent == [.leave])
        #expect(said.last == "You left the room.")
    }

    /// Quitting before the room arrived closes the session, and the program says the room was not joined.
    @Test func quittingBeforeTheRoomArrivedStillClosesTheSession() throws {
        let connection = ScriptedConnection()
        let driver = try RoomDriver(state: AppState(roles: roles), connection: connection, clock: { t0 })
        driver.start()
        driver.dispatch(.key(.char("q"), at: t0))
        #expect(driver.quitting)
        #expect(driver.finish() == .failed("Stopped before the room was joined."))
        #expect(connection.sent == [.leave])
    }
}

@Suite(.ownThread) struct ScreenLoopTests {
    @Test func drawsOnChangeOnlyAndLeavesOnQ() throws {
        let connection = ScriptedConnection { $0.deliver(.server(.joined(snapshot(selfID: "hana")), seq: 5, at: t0)) }
        let sink = HeadlessSink(width: 80, height: 24)
        let loop = try ScreenLoop(state: AppState(roles: roles), connection: connection, theme: Theme(level: .none))
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let unsafeLoop = loop
        nonisolated(unsafe) var outcome: LoopOutcome?
        Thread {
            outcome = unsafeLoop.run(on: sink)
            done.signal()
        }.start()
        var shown = false
        for _ in 0..<100 where !shown {
            usleep(20_000)
            shown = sink.lines.contains { $0.contains("you: Hana · listener") }
        }
        #expect(shown)
        // An event that changes nothing on screen draws nothing: Ana's mute state is already "on".
        connection.deliver(.server(.muteChanged("ana", muted: false, by: "ana"), seq: 6, at: t0))
        connection.deliver(.server(.handRaised("eli", at: t0), seq: 7, at: t0))
        var updated = false
        for _ in 0..<100 where !updated {
            usleep(20_000)
            updated = sink.lines.contains { $0.contains("Raised hands (1)") }
        }
        #expect(updated)
        sink.press(.char("q"))
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(outcome == .left)
        #expect(connection.sent == [.leave])
        #expect(loop.statistics.frames == 2)
    }
}

extension ScreenLoopTests {
    @Test func aConnectionThatFailsBeforeTheRoomIsAFailure() throws {
        let connection = ScriptedConnection { $0.deliver(.sessionEnded("Cannot reach the room: refused.", at: t0)) }
        let loop = try ScreenLoop(state: AppState(roles: roles), connection: connection, theme: Theme(level: .none))
        #expect(loop.run(on: HeadlessSink(width: 80, height: 24)) == .failed("Cannot reach the room: refused."))
        #expect(connection.sent == [])
    }

    @Test func aStopFromAnotherThreadLeavesTheRoomWithoutAsking() throws {
        let connection = ScriptedConnection { $0.deliver(.server(.joined(snapshot(selfID: "ana")), seq: 5, at: t0)) }
        let sink = HeadlessSink(width: 80, height: 24)
        let loop = try ScreenLoop(state: AppState(roles: roles), connection: connection, theme: Theme(level: .none))
        let stop = loop.requestStop
        Thread.detachNewThread {
            usleep(200_000)
            stop()
        }
        // Ana is the host: `q` would ask first; a stop does not.
        #expect(loop.run(on: sink) == .left)
        #expect(connection.sent == [.leave])
        #expect(loop.state.leaving)
    }
}

@Suite(.ownThread) struct RoundTripMillisecondsTests {
    @Test func roundsToWholeMillisecondsAndNeverShowsZero() {
        #expect(SessionConnection.milliseconds(.microseconds(120)) == 1)
        #expect(SessionConnection.milliseconds(.microseconds(18_499)) == 18)
        #expect(SessionConnection.milliseconds(.microseconds(18_500)) == 19)
        #expect(SessionConnection.milliseconds(.seconds(2)) == 2000)
    }
}

@Suite(.ownThread) struct UnreachableWordingTests {
    /// The words come from the failure's cause, never from its text: a 404 is the handshake's status, a TLS
    /// failure the transport's case, whatever the problem's words say.
    @Test func theWordsAreChosenFromTheCause() {
        #expect(
            SessionConnection.describe(
                .connectionFailed(
                    "websocket handshake: the server answered 404 Not Found (HTTP 404)",
                    cause: .unreachable(.httpStatus(404))))
                == "There is no room at this address. Room addresses look like ws://HOST:PORT/rooms/ROOM.")
        let tls = SessionConnection.describe(
            .connectionFailed(
                "TLS handshake with 127.0.0.1:40412 failed: error:0A00010B:SSL routines::wrong version number",
                cause: .unreachable(.notTLS)))
        #expect(
            tls
                == "The server at this address does not speak TLS. If it is a plain server, use ws:// instead of wss://."
        )
        // A host whose name holds "certificate", refused: what matters is the refusal.
        #expect(
            SessionConnection.describe(
                .connectionFailed(
                    "connect certificate.example:40404: Connection refused", cause: .unreachable(.refused)))
                == "Nothing answers at this address. Check the address and port, and that the server runs.")
        // A status other than 404 is quoted, as any failure the person cannot act on.
        #expect(
            SessionConnection.describe(
                .connectionFailed(
                    "websocket handshake: the server answered 502 Bad Gateway (HTTP 502)",
                    cause: .unreachable(.httpStatus(502))))
                == "The room could not be reached (websocket handshake: the server answered 502 Bad Gateway "
                + "(HTTP 502)). Check the address and try again.")
        #expect(
            SessionConnection.describe(
                .connectionFailed("lost the connection and 5 retries failed: closed", cause: .lost(lastTry: .other)))
                == "The connection was lost and could not be made again. Check your network and join again.")
        #expect(
            SessionConnection.describe(
                .connectionFailed("lost the connection and 5 retries failed: x", cause: .lost(lastTry: .timedOut)))
                == "The server did not answer in time. Check the address, and try again.")
    }
}
