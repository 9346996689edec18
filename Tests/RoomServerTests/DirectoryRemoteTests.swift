import RoomCore
import RoomProtocol
import Testing

@testable import RoomServer

/// A node's lobby in a cluster: the rooms it keeps a copy of come from their outcomes, every other room from what
/// the node that owns it says (`replaceRemote`), with the reasons that node gives for a room leaving the list.
extension DirectoryWatcherTests {
    @Test func roomsOtherNodesOwnArriveChangeAndLeaveWithTheReasonsTheirOwnersGive() throws {
        let lobby = Link(id: 1)
        directory.watch(lobby)
        directory.replaceRemote(["jazz": .added(room("jazz", topic: "Late"), .started)])
        directory.replaceRemote([
            "jazz": .added(room("jazz", topic: "Late", listeners: 2), .started),
            "rust": .added(room("rust"), .listed),
        ])
        // Said again unchanged: nothing goes out.
        directory.replaceRemote([
            "jazz": .added(room("jazz", topic: "Late", listeners: 2), .started),
            "rust": .added(room("rust"), .listed),
        ])
        directory.replaceRemote(["jazz": .removed(room: "jazz", .empty), "rust": .added(room("rust"), .listed)])
        // A room no node speaks of any more has ended.
        directory.replaceRemote([:])
        #expect(
            try lobby.messages == [
                .rooms([], seq: 0),
                .changed([.added(room("jazz", topic: "Late"), .started)], seq: 1),
                .changed(
                    [.updated(room("jazz", topic: "Late", listeners: 2)), .added(room("rust"), .listed)], seq: 2),
                .changed([.removed(room: "jazz", .empty)], seq: 3),
                .changed([.removed(room: "rust", .ended)], seq: 4),
            ])
        #expect(directory.listings.isEmpty)
    }

    @Test func aRoomThisNodeFollowsKeepsItsOwnEntryWhateverTheOwnersRecordsSay() throws {
        directory.replaceRemote(["jazz": .added(room("jazz", topic: "Owner's word"), .started)])
        let lobby = Link(id: 1)
        directory.watch(lobby)
        // The node takes a copy: its lobbies were told nothing by it, and its copy's first change says the room
        // as the copy has it. A watcher sees the difference only.
        directory.follow("jazz", reported: nil)
        change(.added(room("jazz", topic: "Copy's word"), .started))
        // The owner's records, a tick late, no longer move the entry.
        directory.replaceRemote(["jazz": .added(room("jazz", topic: "Stale"), .started)])
        directory.replaceRemote([:])
        #expect(
            try lobby.messages == [
                .rooms([room("jazz", topic: "Owner's word")], seq: 1),
                .changed([.updated(room("jazz", topic: "Copy's word"))], seq: 2),
            ])
        #expect(directory.listings["jazz"]?.topic == "Copy's word")
    }

    @Test func aCopyTakenOfAnUnlistedRoomTakesItOutOfTheListOnTheLoopsNextTurn() throws {
        directory.replaceRemote(["jazz": .added(room("jazz"), .started)])
        let lobby = Link(id: 1)
        directory.watch(lobby)
        // Without a loop a deferred change waits for the next flush.
        directory.follow("jazz", reported: nil)
        #expect(try lobby.messages == [.rooms([room("jazz")], seq: 1)])
        directory.flush()
        #expect(try lobby.messages.last == .changed([.removed(room: "jazz", .unlisted)], seq: 2))
    }

    @Test func anEntryBetweenNodesReadsBackAsWrittenAndIsReadAsStrictlyAsALobbyMessage() throws {
        let entry = DirectoryCodec.ClusterEntry(
            change: .added(room("jazz", topic: "Late", listeners: 3), .listed), epoch: 7, at: 1_764_412_801_000)
        #expect(try DirectoryCodec.decodeEntry(DirectoryCodec.encode(entry)) == entry)
        let gone = DirectoryCodec.ClusterEntry(change: .removed(room: "jazz", .ended), epoch: 8, at: 5)
        #expect(try DirectoryCodec.decodeEntry(DirectoryCodec.encode(gone)) == gone)
        let duplicate = #"{"epoch":1,"epoch":2,"at":0,"change":{"change":"removed","why":"ended","name":"jazz"}}"#
        #expect(throws: ControlDecodeError.self) { try DirectoryCodec.decodeEntry(Array(duplicate.utf8)) }
        let badRoom = #"{"epoch":1,"at":0,"change":{"change":"removed","why":"ended","name":"../x"}}"#
        #expect(throws: ControlDecodeError.self) { try DirectoryCodec.decodeEntry(Array(badRoom.utf8)) }
        let negative = #"{"epoch":-1,"at":0,"change":{"change":"removed","why":"ended","name":"jazz"}}"#
        #expect(throws: ControlDecodeError.self) { try DirectoryCodec.decodeEntry(Array(negative.utf8)) }
    }
}
