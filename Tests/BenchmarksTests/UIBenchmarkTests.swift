import ClubroomResources
import RoomCore
import Testing
import UIBenchmarks

@Suite struct UIBenchmarkTests {
    let roles: RoleTable
    let t0: Timestamp = 1_800_000_000_000

    init() throws {
        roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
    }

    @Test func theFrameBenchmarkRendersTheLargeRoom() {
        let result = UIBenchmark.frameTimes(size: 2_000, speakers: 10, width: 80, height: 24, frames: 5, roles: roles)
        #expect(result.median > 0)
        // Levels change before every frame, so every frame writes something.
        #expect(result.runs >= 1)
    }

    @Test func theBenchmarkRoomHasTheAskedShape() {
        let room = UIBenchmark.room(size: 500, speakers: 10, roles: roles, now: t0)
        #expect(room.peers.count == 500)
        #expect(room.peers.filter { roles.isOnStage($0.role) }.count == 10)
        #expect(room.peers.filter { $0.handRaisedAt != nil }.count == 20)
    }
}
