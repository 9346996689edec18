import MediaWire

/// When a sender repeats earlier frames (RFC 2198 redundancy), from the loss the server reports on its stream
/// about once a second: the worse of what the server misses of its uplink and the worst any listener reports of
/// its downlink, and the runs that loss came in (docs/media.md, "Redundancy").
///
/// - From 2 % of packets lost in a report, each packet repeats the frame before it: a lone loss is then rebuilt
///   exactly from the next packet, where FEC would give a frame of lower quality.
/// - Two frames when the loss comes in bursts: the packets lost over the last reports came in runs of
///   `burstRunLength` or more on average (a congested queue, a Wi-Fi fade), which one repeated frame cannot
///   rebuild; or when it is heavy: from 17 % on average over the last three reports, where runs of two happen
///   often even at random. The runs come from the server's loss-runs report (``RTCPLossRuns``); a report block's
///   share lost cannot tell 10 % lost one packet at a time from 10 % lost three at a time, and random 10 % does
///   well with one frame at about twice the clean bitrate, where two would take three times.
/// - Up at once; down one step only after `holdReports` reports in a row that ask for less, so a loss that comes
///   and goes does not switch it on and off every second. Off again, a clean network costs nothing.
public struct RedundancyPolicy: Sendable, Equatable {
    /// The loss (percent) from which each packet repeats one earlier frame.
    public static let oneFrameFrom = 2
    /// The mean loss (percent) over the last `averagedReports` from which it repeats two.
    public static let twoFramesFrom = 17
    /// The mean length of a run of lost packets, over the last `averagedReports`, from which it repeats two. At
    /// random loss of p the mean run is 1 / (1 − p): 1.1 at 10 %, 1.25 at 20 %.
    public static let burstRunLength = 1.5
    /// The fewest packets lost over the last `averagedReports` whose runs say anything.
    public static let burstEvidence = 4
    /// Reports the two-frame decisions look back over.
    public static let averagedReports = 3
    /// Reports in a row asking for less before the redundancy steps down.
    public static let holdReports = 5

    /// Earlier frames each packet repeats now: 0, 1 or 2.
    public private(set) var level = 0
    private var lowerReports = 0
    private var recent: [Int] = []
    /// The runs of loss in each of the last reports, and the packets lost in them.
    private var recentRuns: [Int] = []
    private var recentRunLost: [Int] = []

    /// No redundancy.
    public init() {}

    /// Whether the loss over the last reports came in bursts: enough packets lost, in runs this long on average.
    public var lossComesInBursts: Bool {
        let runs = recentRuns.reduce(0, +)
        let lost = recentRunLost.reduce(0, +)
        return runs > 0 && lost >= Self.burstEvidence && Double(lost) / Double(runs) >= Self.burstRunLength
    }

    /// One report of the loss on the stream, with the runs it came in when the server said them (none said is
    /// none lost in runs).
    public mutating func report(lossPercent percent: Int, runs: RTCPLossRuns? = nil) {
        recent.append(percent)
        if recent.count > Self.averagedReports { recent.removeFirst() }
        recentRuns.append(Int(runs?.runs ?? 0))
        recentRunLost.append(Int(runs?.lost ?? 0))
        if recentRuns.count > Self.averagedReports {
            recentRuns.removeFirst()
            recentRunLost.removeFirst()
        }
        let mean = recent.count == Self.averagedReports ? recent.reduce(0, +) / Self.averagedReports : 0
        let wanted =
            percent >= Self.oneFrameFrom && lossComesInBursts || mean >= Self.twoFramesFrom
            ? 2 : percent >= Self.oneFrameFrom ? 1 : 0
        if wanted >= level {
            level = wanted
            lowerReports = 0
            return
        }
        lowerReports += 1
        if lowerReports >= Self.holdReports {
            level -= 1
            lowerReports = 0
        }
    }
}
