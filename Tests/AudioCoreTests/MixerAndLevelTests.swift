import Testing

@testable import AudioCore

/// Renders one mix of `sources` (each with its gain) to an array.
func mix(_ sources: [([Int16], Float)], frameLength: Int) -> [Int16] {
    var mixer = Mixer(frameLength: frameLength)
    for (samples, gain) in sources {
        mixer.add(samples, gain: gain)
    }
    var output = [Int16](repeating: 0, count: frameLength)
    output.withUnsafeMutableBufferPointer { mixer.render(into: $0) }
    return output
}

/// One 20 ms frame of a tone.
func toneFrame(frequency: Double, amplitude: Double, count: Int = 960) -> [Int16] {
    var generator = ToneGenerator(frequency: frequency, amplitude: amplitude)
    var frame = [Int16](repeating: 0, count: count)
    generator.fill(&frame)
    return frame
}

@Suite struct MixerTests {
    @Test func singleSourceBelowTheKneePassesThroughExactly() {
        let ramp = (0..<960).map { Int16(-16_384 + $0 * 34) }
        #expect(ramp.last! == 16_222)
        #expect(mix([(ramp, 1)], frameLength: 960) == ramp)
        #expect(mix([([16_384, -16_384], 1)], frameLength: 2) == [16_384, -16_384])
    }

    @Test func loudSamplesBendBelowFullScale() {
        #expect(mix([([32_767, -32_768, 24_000], 1)], frameLength: 3) == [24_576, -24_576, 21_583])
        #expect(Mixer.softClip(20_000) > 16_384 && Mixer.softClip(20_000) < 20_000)
        var previous = Mixer.softClip(0)
        for value in stride(from: Float(1), through: 400_000, by: 97) {
            let bent = Mixer.softClip(value)
            #expect(bent > previous)
            previous = bent
        }
        #expect(previous < Mixer.fullScale)
    }

    @Test func fullScaleSourcesNeverWrap() {
        let high = [Int16](repeating: 32_767, count: 4)
        let low = [Int16](repeating: -32_768, count: 4)
        #expect(mix([(high, 1), (high, 1)], frameLength: 4) == [28_671, 28_671, 28_671, 28_671])
        #expect(mix([(low, 1), (low, 1)], frameLength: 4) == [-28_671, -28_671, -28_671, -28_671])
        let many = mix(Array(repeating: (high, Float(2)), count: 50), frameLength: 4)
        #expect(many.allSatisfy { $0 > 32_000 && $0 <= 32_767 })
        #expect(mix([(high, 1), (low, 1)], frameLength: 4) == [-1, -1, -1, -1])
    }

    @Test func gainIsAppliedAndClamped() {
        #expect(Mixer.gain(percent: 50) == 0.5)
        #expect(Mixer.gain(percent: 300) == 2)
        #expect(Mixer.gain(percent: -5) == 0)
        let source: [Int16] = [1_000, -1_000, 3]
        #expect(mix([(source, Mixer.gain(percent: 50))], frameLength: 3) == [500, -500, 2])
        #expect(mix([(source, Mixer.gain(percent: 200))], frameLength: 3) == [2_000, -2_000, 6])
        #expect(mix([(source, 7)], frameLength: 3) == [2_000, -2_000, 6])
        #expect(mix([(source, 0)], frameLength: 3) == [0, 0, 0])
        #expect(mix([(source, .nan)], frameLength: 3) == [0, 0, 0])
        #expect(mix([(source, 1), ([10, 10, 10], 1)], frameLength: 3) == [1_010, -990, 13])
    }

    @Test func renderStartsAFreshFrame() {
        var mixer = Mixer(frameLength: 2)
        mixer.add([100, 200])
        #expect(mixer.sourceCount == 1)
        var output: [Int16] = [0, 0]
        output.withUnsafeMutableBufferPointer { mixer.render(into: $0) }
        #expect(output == [100, 200])
        #expect(mixer.sourceCount == 0)
        mixer.add([5])
        output.withUnsafeMutableBufferPointer { mixer.render(into: $0) }
        #expect(output == [5, 0])
    }
}

@Suite struct LevelTests {
    @Test func levelsInDBovMatchTheReferenceSignals() {
        let square = (0..<960).map { $0 % 2 == 0 ? Int16(32_767) : Int16(-32_768) }
        #expect(AudioLevel.dBov(square) == 0)
        #expect(AudioLevel.dBov(toneFrame(frequency: 1_000, amplitude: 1)) == 3)
        #expect(AudioLevel.dBov(toneFrame(frequency: 1_000, amplitude: 0.1)) == 23)
        #expect(AudioLevel.dBov(toneFrame(frequency: 1_000, amplitude: 0.01)) == 43)
        #expect(AudioLevel.dBov([Int16](repeating: 0, count: 960)) == 127)
        #expect(AudioLevel.dBov([Int16]()) == 127)
        #expect(AudioLevel.dBov([1, -1]) == 90)
    }

    @Test func uiLevelsMapSixtyDecibelsOntoZeroToHundred() {
        #expect(AudioLevel.uiLevel(dBov: 0) == 100)
        #expect(AudioLevel.uiLevel(dBov: 3) == 95)
        #expect(AudioLevel.uiLevel(dBov: 23) == 62)
        #expect(AudioLevel.uiLevel(dBov: 30) == 50)
        #expect(AudioLevel.uiLevel(dBov: 60) == 0)
        #expect(AudioLevel.uiLevel(dBov: 127) == 0)
        #expect(AudioLevel.meanSquare(dBov: 127) == 0)
        #expect(abs(AudioLevel.meanSquare(dBov: 20) - 0.01) < 1e-12)
    }

    @Test func ballisticsRiseAtOnceHoldThenFall() {
        var ballistics = LevelBallistics(holdMilliseconds: 300, fallDecibelsPerSecond: 20)
        #expect(ballistics.update(dBov: 10, at: 0) == 10)
        #expect(ballistics.update(dBov: 127, at: 100) == 10)
        #expect(ballistics.decibels(at: 300) == 10)
        #expect(ballistics.decibels(at: 400) == 12)
        #expect(ballistics.update(dBov: 40, at: 1_300) == 30)
        #expect(ballistics.update(dBov: 20, at: 1_350) == 20)
        #expect(ballistics.uiLevel(at: 1_350) == 67)
        #expect(ballistics.decibels(at: 1_650) == 20)
        #expect(ballistics.decibels(at: 1_750) == 22)
        #expect(ballistics.uiLevel(at: 1_750) == 63)
        #expect(ballistics.decibels(at: 100_000) == 127)
        #expect(ballistics.uiLevel(at: 100_000) == 0)
    }

    @Test func speakerActivityReportsChangesAtMostEveryQuarterSecond() {
        var activity = SpeakerActivity<String>()
        activity.record("ann", dBov: 20, at: 0)
        for time in stride(from: Int64(0), through: 80, by: 20) {
            activity.record("bob", dBov: 55, at: time)
        }
        #expect(activity.poll(at: 0) == ["ann": 55])
        activity.record("ann", dBov: 20, at: 20)
        #expect(activity.poll(at: 20) == nil)
        #expect(activity.poll(at: 249) == nil)
        #expect(activity.poll(at: 250) == ["ann": 60])
        // Ann's last packet was at 20 ms: more than 300 ms later she counts as silent.
        #expect(activity.poll(at: 320) == nil)
        #expect(activity.poll(at: 500) == [:])
        #expect(activity.poll(at: 600) == nil)
        for time in stride(from: Int64(600), through: 680, by: 20) {
            activity.record("ann", dBov: 10, at: time)
        }
        #expect(activity.poll(at: 700) == nil)
        #expect(activity.poll(at: 750) == ["ann": 85])
        activity.record("ann", dBov: 10, at: 1_000)
        #expect(activity.poll(at: 1_000) == nil)
        activity.remove("ann")
        #expect(activity.poll(at: 1_010) == [:])
    }
}

@Suite struct ExtremeTimeTests {
    @Test func timesAtTheEdgesOfInt64DoNotTrap() {
        var ballistics = LevelBallistics()
        ballistics.update(dBov: 10, at: .min)
        #expect(ballistics.decibels(at: .max) == 127)
        var activity = SpeakerActivity<Int>()
        activity.record(1, dBov: 10, at: .min)
        #expect(activity.poll(at: .max) == nil)
        var buffer = JitterBuffer<Int>()
        buffer.insert(sequence: 1, timestamp: 1, ssrc: 1, arrival: .max, payload: 1)
        buffer.insert(sequence: 2, timestamp: 961, ssrc: 1, arrival: .min, payload: 2)
        _ = buffer.nextFrame(at: .max)
        _ = buffer.nextFrame(at: .min)
        #expect(buffer.statistics.received == 2)
    }
}
