import Foundation
import RoomClient
import RoomCore
import RoomProtocol
import RoomTesting
import Testing

/// A client whose network goes silent for 30 s (nothing in, nothing out, no reset) shows that it is
/// reconnecting within 15 s, and is back in the room with the role it had within 2 s of the network returning.
/// It runs the real 30 s: the client's and the server's timers are the product's.
@Suite(.ownThread) struct SilentNetworkTests {
    @Test func aClientCutOffFor30SecondsSaysSoAndIsBackInItsRoleWithin2Seconds() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        // The client's network: a proxy that can hold everything, both ways, without a reset.
        let network = try FreezableProxy(targetPort: server.port)
        let (ana, anaEvents) = try joinedSession(server, "ana", role: "host")
        defer { ana.shutdown() }
        let eliEvents = SessionRecorder()
        let eli = try RoomSession(
            url: "ws://127.0.0.1:\(network.port)/rooms/lobby", token: try server.token("eli", role: "audience")
        ) { eliEvents.record($0) }
        defer { eli.shutdown() }
        eli.start()
        let joined = eliEvents.wait {
            if case .message(let message) = $0, case .joined = message.event { return true }
            return false
        }
        try #require(joined != nil, "eli did not join through the proxy: \(eliEvents.all)")
        // A role given in the room, which only the server's memory of the departed peer keeps.
        _ = ana.send(.setRole("eli", .speaker))
        let promoted = eliEvents.wait {
            if case .message(let message) = $0, case .roleChanged("eli", .speaker, _, _) = message.event { return true }
            return false
        }
        try #require(promoted != nil, "eli was not made a speaker: \(eliEvents.all.suffix(3))")

        network.freeze()
        let silent = ContinuousClock.now
        let reconnecting = eliEvents.wait(timeout: 15) {
            if case .reconnecting = $0 { return true }
            return false
        }
        #expect(reconnecting != nil, "eli did not show 'reconnecting' within 15 s: \(eliEvents.all.suffix(3))")
        let noticed = ContinuousClock.now - silent
        #expect(noticed < .seconds(15))
        #expect(eli.isConnected == false)
        // The rest of the 30 s of silence.
        Thread.sleep(forTimeInterval: max(0, 30 - Self.seconds(ContinuousClock.now - silent)))
        network.thaw()
        let returned = ContinuousClock.now
        let back = eliEvents.wait(timeout: 2) {
            if case .reconnected(let message) = $0, case .joined = message.event { return true }
            return false
        }
        guard case .reconnected(let message)? = back, case .joined(let snapshot) = message.event else {
            Issue.record("eli was not back within 2 s of the network returning: \(eliEvents.all.suffix(3))")
            return
        }
        let again = ContinuousClock.now - returned
        print("silent network: 'reconnecting' after \(noticed), back \(again) after the network returned")
        #expect(again < .seconds(2))
        #expect(snapshot.peers.first { $0.peer.id == "eli" }?.peer.role == .speaker)
        #expect(snapshot.resumed)
        // The others see the speaker back as a speaker too.
        let seen = anaEvents.wait(timeout: 2) { event in
            guard case .message(let message) = event else { return false }
            switch message.event {
            case .peerJoined(let peer): return peer.peer.id == "eli" && peer.peer.role == .speaker
            case .peersJoined(let peers): return peers.contains { $0.peer.id == "eli" && $0.peer.role == .speaker }
            default: return false
            }
        }
        #expect(seen != nil, "ana did not see eli come back as a speaker: \(anaEvents.all.suffix(3))")
    }

    /// The lobby's connection notices silence as a room's does: nothing from the server for 10 s (two of its
    /// pings) and it says "reconnecting", then it is back with the whole list once the network returns.
    @Test func aLobbyCutOffSaysSoWithin15SecondsAndGetsTheListBack() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        let (ana, _) = try joinedSession(server, "ana", role: "host")
        defer { ana.shutdown() }
        let network = try FreezableProxy(targetPort: server.port)
        let lobby = DirectoryRecorder()
        let session = try DirectorySession(url: "ws://127.0.0.1:\(network.port)/rooms", token: try server.invite()) {
            lobby.record($0)
        }
        defer { session.shutdown() }
        session.start()
        try #require(lobby.waitFor { $0["lobby"] != nil }, "the lobby did not list the room: \(lobby.all)")
        let lists = lobby.all.filter { if case .rooms = $0 { true } else { false } }.count

        network.freeze()
        let silent = ContinuousClock.now
        let reconnecting = lobby.wait(timeout: 15) {
            if case .reconnecting = $0 { return true }
            return false
        }
        let noticed = ContinuousClock.now - silent
        #expect(reconnecting == .reconnecting(attempt: 1), "no 'reconnecting' within 15 s: \(lobby.all.suffix(3))")
        // Both sides ping every 5 s, so the last thing heard is at most 5 s old when the network goes: the lobby's
        // 10 s say so 5 to 10 s later (timer granularity and load aside). The server's own 15 s would take 10 to
        // 15 s, and over 12 s unless the last ping came in the very moment before the silence.
        #expect(noticed >= .seconds(5))
        #expect(noticed < .seconds(12))
        network.thaw()
        let back = ContinuousClock.now
        var listed = false
        while !listed && ContinuousClock.now - back < .seconds(10) {
            listed = lobby.all.filter { if case .rooms = $0 { true } else { false } }.count > lists
            if !listed { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(listed, "the lobby did not get the list again after the network returned: \(lobby.all.suffix(3))")
        #expect(lobby.rooms["lobby"] != nil)
        print("silent lobby: 'reconnecting' after \(noticed), the list back \(ContinuousClock.now - back) later")
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
