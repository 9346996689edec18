import Foundation
import Testing

@testable import RoomPersistence

/// The bans in the link registry: kept across a reopening, newest first, one per identity, lifted one by one.
@Suite struct BanTests {
    @Test func aBanIsKeptAcrossAReopeningAndLiftedOnce() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/" + LinkRegistry.fileName
        let registry = try LinkRegistry(path: path)
        #expect(try registry.ban(of: "bo") == nil)
        try registry.ban(BanRecord(identity: "bo", name: "Bo", by: "ana", room: "jazz", at: 100, reason: "spam"))
        try registry.ban(BanRecord(identity: "cy", by: "ana", room: "jazz", at: 200))
        registry.close()

        let reopened = try LinkRegistry(path: path)
        #expect(
            try reopened.bans() == [
                BanRecord(identity: "cy", by: "ana", room: "jazz", at: 200, reason: ""),
                BanRecord(identity: "bo", name: "Bo", by: "ana", room: "jazz", at: 100, reason: "spam"),
            ])
        #expect(try reopened.bannedIdentity(named: "bo") == "bo")
        #expect(try reopened.bannedIdentity(named: "BO") == "bo")
        #expect(try reopened.bannedIdentity(named: "cy") == "cy")
        #expect(try reopened.bannedIdentity(named: "Dee") == nil)
        // A second ban of the same identity replaces the first.
        try reopened.ban(BanRecord(identity: "bo", by: "mo", room: "rock", at: 300, reason: "again"))
        #expect(
            try reopened.ban(of: "bo") == BanRecord(identity: "bo", by: "mo", room: "rock", at: 300, reason: "again"))
        #expect(try reopened.bans().count == 2)
        #expect(try reopened.lift(ban: "bo"))
        #expect(try !reopened.lift(ban: "bo"))
        #expect(try reopened.ban(of: "bo") == nil)
        #expect(try reopened.bans().map(\.identity) == ["cy"])
        reopened.close()
    }

    @Test func replacingTheBansLeavesExactlyTheGivenOnes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let registry = try LinkRegistry(path: folder.path + "/" + LinkRegistry.fileName)
        defer { registry.close() }
        try registry.ban(BanRecord(identity: "bo", name: "Bo", by: "ana", room: "jazz", at: 100, reason: "spam"))
        try registry.ban(BanRecord(identity: "cy", by: "ana", room: "jazz", at: 200))
        let cluster = [
            BanRecord(identity: "cy", name: "Cy", by: "mo", room: "rock", at: 300, reason: "again"),
            BanRecord(identity: "dee", by: "ana", room: nil, at: 250),
        ]
        try registry.replaceBans(with: cluster)
        #expect(try registry.bans() == cluster)
        try registry.replaceBans(with: [])
        #expect(try registry.bans().isEmpty)
    }
}
