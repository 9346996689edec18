import Foundation
import RoomTesting
import Testing

/// `clubroom bans` on a data folder: an empty list says so, lifting a ban nobody has is an error in words, and
/// a folder that does not exist is named.
@Test(.ownThread) func bansListsNoneAndLiftsOnlyABanThatExists() throws {
    let data = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-bans-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: data) }
    let binary = try clubroomBinary()
    let listed = try ChildProcess(executable: binary, arguments: ["bans", "--data", data]).finish()
    #expect(listed.status == 0)
    #expect(listed.standardOutput == "No bans.\n")
    let lifted = try ChildProcess(executable: binary, arguments: ["bans", "--data", data, "lift", "bo"]).finish()
    #expect(lifted.status == 1)
    #expect(
        lifted.standardError
            == "clubroom bans: no one banned is called bo (or more than one is); 'clubroom bans' lists who is, by "
            + "identity\n")
    let missing = try ChildProcess(executable: binary, arguments: ["bans", "--data", data + "/none"]).finish()
    #expect(missing.status == 1)
    #expect(
        missing.standardError
            == "clubroom bans: there is no data directory \(data)/none; give the server's with --data DIR\n")
}
