import Foundation
import RoomAppRuntime
import RoomTesting
import Testing

@Suite struct StateFolderTests {
    /// The client's state folder holds its guest key and logs: when the log makes it first, it is made 0700.
    @Test func theStateFolderTheLogMakesIsItsOwnersOnly() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let state = directory.file("state")
        let log = StandardErrorLog(name: "join", environment: ["XDG_STATE_HOME": state])
        log.restore()
        let mode = try FileManager.default.attributesOfItem(atPath: state + "/clubroom")[.posixPermissions] as? Int
        #expect(mode == 0o700)
        #expect(log.path == state + "/clubroom/join.log")
    }
}
