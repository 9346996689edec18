/// What the forwarder measured of one peer's connection over the last report interval: the worse of its uplink
/// (what the server receives from it) and its downlink (what it reports receiving), and the round trip.
public struct LinkMeasures: Sendable, Equatable {
    /// The share of audio lost, in percent (0–100): packets lost, and packets that came too late to be played.
    public var lossPercent: Int
    /// The interarrival jitter (RFC 3550 A.8), in milliseconds.
    public var jitterMilliseconds: Int
    /// The round trip between the peer and the server, in milliseconds; 0 until measured.
    public var rttMilliseconds: Int
    /// Whether anything came from the peer lately (a report or media); without it the score is 0.
    public var hasMedia: Bool

    public init(lossPercent: Int, jitterMilliseconds: Int, rttMilliseconds: Int, hasMedia: Bool = true) {
        self.lossPercent = min(100, max(0, lossPercent))
        self.jitterMilliseconds = max(0, jitterMilliseconds)
        self.rttMilliseconds = max(0, rttMilliseconds)
        self.hasMedia = hasMedia
    }

    /// No media: the peer has sent nothing for `NetworkQuality.silenceMilliseconds`.
    public static let none = LinkMeasures(lossPercent: 0, jitterMilliseconds: 0, rttMilliseconds: 0, hasMedia: false)

    /// The score, 0 (no media) to 5 (perfect): see ``NetworkQuality``.
    public var score: Int { hasMedia ? NetworkQuality.score(NetworkQuality.mos(self)) : 0 }
}

/// The network quality score: a simplified ITU-T G.107 E-model (as LiveKit's `ConnectionQuality` and most
/// WebRTC stacks use it) turns loss, jitter and round trip into an R factor and a mean opinion score (MOS), and
/// the MOS into a score from 1 to 5. docs/media.md gives the formula and its reasons.
public enum NetworkQuality {
    /// The R factor of a perfect wideband call (G.107's default R0 − Is).
    static let bestR = 93.2
    /// Delay that every path has: a 20 ms frame and the jitter buffer's first frame, in ms.
    static let fixedDelayMilliseconds = 20.0
    /// The codec's robustness against random loss, Bpl in G.107 (Opus with in-band FEC and concealment).
    static let lossRobustness = 16.0
    /// The MOS at which each score begins: 5 from 4.2, 4 from 3.8, 3 from 3.3, 2 from 2.6, else 1.
    static let scoreFloors: [(score: Int, mos: Double)] = [(5, 4.2), (4, 3.8), (3, 3.3), (2, 2.6)]
    /// How long a peer may send nothing (no report, no media) before its score is 0.
    public static let silenceMilliseconds: Int64 = 5000

    /// The R factor: R = 93.2 − Id − Ie,eff, with the one-way delay d = RTT/2 + 2·jitter + 20 ms,
    /// Id = d/40 below 160 ms and (d − 120)/10 above, and Ie,eff = 95 · P / (P + 16) for P percent lost.
    public static func rFactor(_ measures: LinkMeasures) -> Double {
        let delay =
            Double(measures.rttMilliseconds) / 2 + 2 * Double(measures.jitterMilliseconds) + fixedDelayMilliseconds
        let delayImpairment = delay < 160 ? delay / 40 : (delay - 120) / 10
        let loss = Double(measures.lossPercent)
        let lossImpairment = 95 * loss / (loss + lossRobustness)
        return bestR - delayImpairment - lossImpairment
    }

    /// G.107's MOS of an R factor: 1 below 0, 4.5 above 100, else 1 + 0.035 R + 7·10⁻⁶ R (R − 60)(100 − R).
    public static func mos(_ measures: LinkMeasures) -> Double {
        let r = rFactor(measures)
        if r <= 0 { return 1 }
        if r >= 100 { return 4.5 }
        return 1 + 0.035 * r + 0.000_007 * r * (r - 60) * (100 - r)
    }

    /// The score of a MOS: 5 from 4.2, 4 from 3.8, 3 from 3.3, 2 from 2.6, 1 below.
    public static func score(_ mos: Double) -> Int {
        scoreFloors.first(where: { mos >= $0.mos })?.score ?? 1
    }
}
