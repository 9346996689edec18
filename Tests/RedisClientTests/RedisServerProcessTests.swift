import Foundation
import Glibc
import RoomTesting
import Testing

/// The test's own `redis-server`.
@Suite(.ownThread) struct RedisServerProcessTests {
    /// A server that kept a pipe of the test process (another test's child's output, made by Foundation without
    /// close-on-exec) would hold back that pipe's end for as long as the server lives.
    @Test func theServerGetsNoneOfTheTestProcessesDescriptors() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        let ours = try ends.map { try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
        let server = try RedisServerProcess(appendOnly: false)
        let folder = "/proc/\(server.pid)/fd"
        let held = try FileManager.default.contentsOfDirectory(atPath: folder).compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)")
        }
        #expect(held.count >= 3, "\(held)")
        #expect(!held.contains(ours[0]) && !held.contains(ours[1]), "\(held) \(ours)")
    }
}
