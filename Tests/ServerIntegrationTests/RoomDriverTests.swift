import ClubroomResources
import Foundation
import RoomApp
import RoomAppRuntime
import RoomCore
import RoomTesting
import Testing

@Suite(.ownThread) struct RoomDriverTests {
    /// The driver the screen and line mode run on, with the real connection: the snapshot builds the state, a
    /// key's or a line's request goes to the server, the server's answer comes back into the state, a refusal is
    /// said without asking the server, and leaving ends the session.
    @Test func requestsTravelToTheServerAndTheAnswersBackIntoTheState() throws {
        try withServer { server, bots in
            let ana = try server.joinedBot("ana", role: "host")
            bots.append(ana)
            let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
            var said: [String] = []
            let driver = try RoomDriver(
                state: AppState(roles: roles, lineMode: true),
                connection: SessionConnection(url: server.url(), token: try server.token("eli", role: "audience")),
                say: { said.append($0) })
            driver.start()
            func waitFor(_ condition: (AppState) -> Bool) -> Bool {
                let deadline = Date().addingTimeInterval(10)
                while Date() < deadline {
                    driver.applyPending()
                    if condition(driver.state) { return true }
                    driver.wait(milliseconds: 10)
                }
                return false
            }
            #expect(waitFor { $0.room.hasJoined && $0.room.peers.count == 2 })
            driver.dispatch(.key(.char("r"), at: driver.now))
            #expect(waitFor { $0.room.me?.handRaisedAt != nil })
            try ana.expect("hand_raised") { $0.string("peer") == "eli" }
            driver.dispatch(.line("/end", at: driver.now))
            #expect(said.last == "Only hosts can end the room.")
            #expect(driver.state.notice == Notice(.refusal, "Only hosts can end the room."))
            ana.send(#"{"cmd":"invite","peer":"eli"}"#)
            #expect(waitFor { $0.room.invitation?.by == "ana" })
            driver.dispatch(.line("/accept", at: driver.now))
            #expect(waitFor { $0.room.me?.role == .speaker })
            driver.dispatch(.line("/leave", at: driver.now))
            #expect(driver.quitting)
            #expect(driver.finish(grace: .seconds(10)) == .left)
            #expect(said.last == "You left the room.")
            try ana.expect("peer_left") { $0.string("peer") == "eli" }
        }
    }
}
