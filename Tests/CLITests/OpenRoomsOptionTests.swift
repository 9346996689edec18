import RoomTesting
import Testing

/// Issue 27: `serve --open-rooms` takes nobody, hosts or anyone; anything else is a usage error with a sentence,
/// and a cluster's node opens no rooms from the lobby.
@Test func openRoomsTakesThreeWords() throws {
    let bad = try runClubroom(["serve", "--listen", "127.0.0.1:0", "--open-rooms", "everyone"])
    #expect(bad.status == 2)
    #expect(
        bad.firstErrorLine
            == "clubroom serve: bad value 'everyone' for '--open-rooms' (expected one of nobody, hosts, anyone)")
    let cluster = try runClubroom([
        "serve", "--listen", "127.0.0.1:0", "--cluster", "redis://127.0.0.1:1", "--node", "a", "--open-rooms",
        "anyone",
    ])
    #expect(cluster.status == 2)
    #expect(
        cluster.firstErrorLine
            == "clubroom serve: bad value 'anyone' for '--open-rooms' (expected nobody with --cluster: a cluster's "
            + "rooms are not opened from the lobby)")
}
