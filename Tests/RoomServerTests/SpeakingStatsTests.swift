import RoomCore
import RoomProtocol
import Testing

@testable import RoomServer

/// Each person's speaking time and turns, counted from the media path's level reports, and the `stats` answer.
@Suite struct SpeakingStatsTests {
    /// The `stats` answer a peer gets, or nil when there is none.
    func stats(_ room: inout RoomAuthority, asker: PeerID = "ana", now: Timestamp) -> [SpeakingStat]? {
        let outcome = room.handle(.stats, from: asker, id: .integer(5), now: now)
        guard outcome.deliveries.count == 1, let delivery = outcome.deliveries.first,
            delivery.to == .peer(asker), delivery.message.seq == nil,
            case .stats(let people, let id) = delivery.message.event, id == .integer(5)
        else { return nil }
        return people
    }

    /// The populated room with Ana and Chen unmuted (a muted speaker's levels count for nothing).
    func unmutedRoom() -> RoomAuthority {
        var room = populatedRoom()
        _ = room.handle(.setMute(false), from: "ana", now: 10)
        _ = room.handle(.setMute(false), from: "chen", now: 10)
        return room
    }

    @Test func levelReportsMakeSpeakingTimeAndTurnsMostFirst() {
        var room = unmutedRoom()
        _ = room.updateLevels(["chen": 60], now: 1_000)
        _ = room.updateLevels(["chen": 55, "ana": 40], now: 1_250)
        _ = room.updateLevels(["chen": 0], now: 4_000)
        _ = room.updateLevels(["ana": 0], now: 2_250)
        // Chen again after more than the hold: a second turn.
        _ = room.updateLevels(["chen": 65], now: 5_000)
        #expect(
            stats(&room, now: 6_000) == [
                SpeakingStat(peer: "chen", name: "Chen", milliseconds: 4_000, turns: 2, talking: true),
                SpeakingStat(peer: "ana", name: "Ana", milliseconds: 1_000, turns: 1, talking: false),
            ])
    }

    @Test func aPauseWithinTheHoldIsOneTurn() {
        var room = unmutedRoom()
        _ = room.updateLevels(["chen": 60], now: 1_000)
        _ = room.updateLevels(["chen": 0], now: 2_000)
        _ = room.updateLevels(["chen": 60], now: 2_000 + RoomSpeaking.hold)
        _ = room.updateLevels(["chen": 0], now: 3_000 + RoomSpeaking.hold)
        #expect(
            stats(&room, now: 9_000) == [
                SpeakingStat(
                    peer: "chen", name: "Chen", milliseconds: 2_000 + RoomSpeaking.hold, turns: 1, talking: false)
            ])
        #expect(RoomSpeaking.hold == 500)
    }

    @Test func peersNotInTheRoomAndLevelsAtZeroCountNothing() {
        var room = unmutedRoom()
        _ = room.updateLevels(["zed": 60, "eli": 0], now: 1_000)
        #expect(stats(&room, now: 2_000) == [])
    }

    @Test func aModeratorMayAskAndAListenerOrSpeakerIsRefused() {
        var room = populatedRoom()
        #expect(stats(&room, asker: "bo", now: 10) == [])
        expectRefused(
            .stats, by: "eli", code: .forbidden,
            message: "only hosts and moderators can see how long each person has spoken")
        expectRefused(
            .stats, by: "chen", code: .forbidden,
            message: "only hosts and moderators can see how long each person has spoken")
    }

    @Test func aRepeatUnderTheSameIdIsAnsweredAgainWithItsMoment() {
        var room = unmutedRoom()
        _ = room.updateLevels(["chen": 60], now: 1_000)
        #expect(stats(&room, now: 2_000)?.first?.milliseconds == 1_000)
        #expect(stats(&room, now: 3_000)?.first?.milliseconds == 2_000)
    }

    @Test func whoReconnectsContinuesTheirTallyUnderTheirIdentity() {
        var room = unmutedRoom()
        _ = room.updateLevels(["chen": 60], now: 1_000)
        // The connection drops while Chen talks: the talk ends with the departure.
        _ = room.leave("chen", reason: .disconnected, now: 3_000)
        _ = room.join(id: "chen", name: "Chen", role: .speaker, now: 8_000)
        _ = room.handle(.setMute(false), from: "chen", now: 8_500)
        _ = room.updateLevels(["chen": 60], now: 9_000)
        _ = room.updateLevels(["chen": 0], now: 10_000)
        #expect(
            stats(&room, now: 11_000) == [
                SpeakingStat(peer: "chen", name: "Chen", milliseconds: 3_000, turns: 2, talking: false)
            ])
    }

    @Test func someoneWhoLeftStaysInTheTallyUnderTheirLastName() {
        var room = unmutedRoom()
        _ = room.updateLevels(["chen": 60], now: 1_000)
        _ = room.updateLevels(["chen": 0], now: 2_000)
        _ = room.leave("chen", reason: .left, now: 3_000)
        #expect(
            stats(&room, now: 4_000) == [
                SpeakingStat(peer: "chen", name: "Chen", milliseconds: 1_000, turns: 1, talking: false)
            ])
    }

    @Test func aRemovedSpeakerStopsTalkingAtTheRemoval() {
        var room = unmutedRoom()
        _ = room.updateLevels(["chen": 60], now: 1_000)
        _ = room.handle(.remove("chen", reason: nil), from: "ana", now: 1_500)
        #expect(
            stats(&room, now: 4_000) == [
                SpeakingStat(peer: "chen", name: "Chen", milliseconds: 500, turns: 1, talking: false)
            ])
    }

    @Test func theTallyStartsAfreshWhenTheRoomGoesLiveAgain() {
        var room = RoomAuthority(name: "lobby", roles: defaultRoles)
        _ = room.join(id: "ana", name: "Ana", role: .host, now: 1)
        _ = room.handle(.setMute(false), from: "ana", now: 2)
        _ = room.updateLevels(["ana": 60], now: 1_000)
        _ = room.updateLevels(["ana": 0], now: 2_000)
        #expect(stats(&room, now: 2_500)?.count == 1)
        _ = room.leave("ana", reason: .left, now: 3_000)
        _ = room.join(id: "ana", name: "Ana", role: .host, now: 4_000)
        #expect(stats(&room, now: 5_000) == [])
    }
}

extension SpeakingStatsTests {
    @Test func aMutedOrDemotedSpeakerStopsAtOnceAndLateReportsDoNotRestartThem() {
        var room = populatedRoom()
        _ = room.handle(.setMute(false), from: "chen", now: 500)
        _ = room.updateLevels(["chen": 60], now: 1_000)
        _ = room.handle(.setMute(true), from: "chen", now: 3_000)
        // The forwarder still counts Chen active until their packets have been missing for its timeout.
        _ = room.updateLevels(["chen": 55], now: 3_100)
        _ = room.updateLevels(["chen": 0], now: 3_400)
        _ = room.handle(.setMute(false), from: "chen", now: 5_000)
        _ = room.updateLevels(["chen": 60], now: 5_100)
        _ = room.handle(.setRole("chen", .audience), from: "ana", now: 6_100)
        _ = room.updateLevels(["chen": 60], now: 6_200)
        #expect(
            stats(&room, now: 9_000) == [
                SpeakingStat(peer: "chen", name: "Chen", milliseconds: 3_000, turns: 2, talking: false)
            ])
    }
}
