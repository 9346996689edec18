import Testing

@testable import AudioCore

@Suite struct SpeakerVolumesTests {
    @Test func aSpeakerIsFoundByTheIdentityItsSSRCBelongsTo() {
        var table = SpeakerVolumes()
        table.setVolume(50, for: "ana")
        table.setVolume(150, for: "bo")
        #expect(table.percent(ssrc: 7) == 100)
        table.setSource(ssrc: 7, peer: "ana")
        table.setSource(ssrc: 9, peer: "bo")
        table.setSource(ssrc: 11, peer: "chen")
        #expect(table.percent(ssrc: 7) == 50)
        #expect(table.gain(ssrc: 7) == 0.5)
        #expect(table.gain(ssrc: 9) == 1.5)
        #expect(table.gain(ssrc: 11) == 1)
        #expect(table.gain(ssrc: 12) == 1)
        // Ana came back with a new SSRC: her volume follows her.
        table.setSource(ssrc: 21, peer: "ana")
        #expect(table.gain(ssrc: 21) == 0.5)
    }

    @Test func volumesAreClampedAnd100IsNotKept() {
        var table = SpeakerVolumes(volumes: ["ana": 300, "bo": -4, "chen": 100])
        #expect(table.volumes == ["ana": 200, "bo": 0])
        table.setVolume(100, for: "ana")
        #expect(table.volumes == ["bo": 0])
        table.setVolumes(["eli": 70])
        #expect(table.volumes == ["eli": 70])
    }

    @Test func aSpeakerAt50PercentIsMixedAtHalfAmplitude() {
        let table = SpeakerVolumes(volumes: ["ana": 50], sources: [7: "ana", 9: "bo"])
        let ana: [Int16] = [8_000, -8_000, 1_234, -3]
        let bo: [Int16] = [100, 200, -300, 400]
        #expect(mix([(ana, table.gain(ssrc: 7))], frameLength: 4) == [4_000, -4_000, 617, -2])
        #expect(
            mix([(ana, table.gain(ssrc: 7)), (bo, table.gain(ssrc: 9))], frameLength: 4) == [4_100, -3_800, 317, 399])
    }
}
