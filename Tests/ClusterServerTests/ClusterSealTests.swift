import ClusterServer
import ClusterState
import Testing

@Suite struct ClusterSealTests {
    let seal = ClusterSeal(secret: Array("the cluster's secret".utf8))

    /// A request opens only for its room and node, with its number; not under another secret, not in clear.
    @Test func aRequestOpensOnlyWhereItWasSealed() throws {
        let plain = Array(#"{"kind":"request","text":"psst"}"#.utf8)
        let sealed = try seal.sealRequest(plain, room: "jazz", node: "n1", sequence: 7)
        #expect(!String(decoding: sealed, as: UTF8.self).contains("psst"))
        let opened = try #require(seal.openRequest(sealed, room: "jazz", node: "n1"))
        #expect(opened.plain == plain && opened.sequence == 7)
        #expect(seal.openRequest(sealed, room: "rock", node: "n1") == nil)
        #expect(seal.openRequest(sealed, room: "jazz", node: "n2") == nil)
        var renumbered = sealed
        renumbered[8] = 8
        #expect(seal.openRequest(renumbered, room: "jazz", node: "n1") == nil)
        #expect(ClusterSeal(secret: [1, 2, 3]).openRequest(sealed, room: "jazz", node: "n1") == nil)
        #expect(seal.openRequest(plain, room: "jazz", node: "n1") == nil)
        // Two seals of the same request differ (a fresh nonce each).
        #expect(try seal.sealRequest(plain, room: "jazz", node: "n1", sequence: 7) != sealed)
    }

    /// An entry opens only at its place in the chain: its room, ID, previous ID, kind and request.
    @Test func anEntryOpensOnlyAtItsPlace() throws {
        let plain = Array("an outcome".utf8)
        let entry = RoomEntry(id: EntryID(seq: 10), prev: EntryID(seq: 9), requestID: "1-0", body: [])
        var sealed = entry
        sealed.body = try seal.sealEntry(plain, room: "jazz", entry: entry)
        #expect(seal.openEntry(sealed, room: "jazz") == plain)
        #expect(seal.openEntry(sealed, room: "rock") == nil)
        for change in 0..<4 {
            var moved = sealed
            switch change {
            case 0: moved.id = EntryID(seq: 11)
            case 1: moved.prev = EntryID(seq: 8)
            case 2: moved.kind = .reset
            default: moved.requestID = "2-0"
            }
            #expect(seal.openEntry(moved, room: "jazz") == nil, "change \(change)")
        }
        let checkpoint = try seal.sealCheckpoint(plain, room: "jazz", at: EntryID(seq: 10))
        #expect(seal.openCheckpoint(checkpoint, room: "jazz", at: EntryID(seq: 10)) == plain)
        #expect(seal.openCheckpoint(checkpoint, room: "jazz", at: EntryID(seq: 9)) == nil)
    }
}
