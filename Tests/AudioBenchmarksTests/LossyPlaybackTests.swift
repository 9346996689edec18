import AudioCore
import RoomTesting
import Testing

@testable import AudioBenchmarks

/// A listener behind a network that loses 20% of the speaker's packets and delays each by 60 ± 20 ms (so they
/// arrive out of order) keeps playing: what it plays has no gap over 200 ms. Measured on the listener's played
/// output (what its mixer hands the device, frame by frame), through a real server, in real time.
@Suite(.ownThread) struct LossyPlaybackTests {
    /// The longest run of silent 20 ms frames in `samples`, from the first heard frame to the last; a frame is
    /// silent when no sample reaches -50 dBFS.
    static func longestGapFrames(_ samples: [Int16]) -> (longest: Int, silentFrames: Int, frames: Int) {
        let frame = AudioFormat.samplesPerFrame
        let loud = stride(from: 0, to: samples.count - frame + 1, by: frame).map { start in
            samples[start..<(start + frame)].contains { abs(Int($0)) >= 104 }
        }
        guard let first = loud.firstIndex(of: true), let last = loud.lastIndex(of: true) else {
            return (loud.count, loud.count, loud.count)
        }
        var longest = 0
        var run = 0
        var silent = 0
        for heard in loud[first...last] {
            run = heard ? 0 : run + 1
            if !heard { silent += 1 }
            longest = max(longest, run)
        }
        return (longest, silent, last - first + 1)
    }

    @Test func theMeasureFindsAGapAndNothingElse() {
        let voice = PathQualityTests.loudVoice(seconds: 1)
        #expect(Self.longestGapFrames(voice).longest == 0)
        var cut = voice
        // 220 ms of silence in the middle: 11 frames.
        let frame = AudioFormat.samplesPerFrame
        cut.replaceSubrange((10 * frame)..<(21 * frame), with: [Int16](repeating: 3, count: 11 * frame))
        #expect(Self.longestGapFrames(cut) == (11, 11, 50))
        // Silence before the first sound and after the last is not a gap.
        let padded = [Int16](repeating: 0, count: 30 * frame) + voice + [Int16](repeating: 0, count: 30 * frame)
        #expect(Self.longestGapFrames(padded).longest == 0)
    }

    @Test func twentyPercentLossWithJitterLeavesNoGapOver200Milliseconds() throws {
        let speech = PathQualityTests.loudVoice(seconds: 4)
        let result = try PathQuality.run(
            speech: speech, lossPercent: 20, seed: 14, voiceProcessing: false, leadInSeconds: 2,
            baseDelayMilliseconds: 40, jitterMilliseconds: 40)
        // The relay did lose about a fifth of the speech's packets.
        #expect(result.lostFrames > result.frames / 8 && result.lostFrames < result.frames * 3 / 10)
        let gaps = Self.longestGapFrames(result.path)
        print(
            "lossy playback: \(result.lostFrames) of \(result.frames) frames lost; longest gap "
                + "\(gaps.longest * AudioFormat.frameMilliseconds) ms; \(gaps.silentFrames) silent frames; "
                + "\(String(describing: result.receiver))")
        // The voice never falls silent (its syllables dip to a tenth of its peak, far above -50 dBFS).
        #expect(Self.longestGapFrames(speech).longest == 0)
        #expect(
            gaps.longest * AudioFormat.frameMilliseconds <= 200,
            "a gap of \(gaps.longest * AudioFormat.frameMilliseconds) ms; \(gaps.silentFrames) of \(gaps.frames) frames silent; \(String(describing: result.receiver))"
        )
        // Heard from the start of the speech to its end: played, not lost in a silence at either end.
        #expect(gaps.frames >= result.frames - 2, "heard \(gaps.frames) of \(result.frames) frames")
    }
}
