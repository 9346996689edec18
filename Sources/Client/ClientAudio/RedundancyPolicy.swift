/// When a sender repeats earlier frames (RFC 2198 redundancy), from the loss the server reports on its stream
/// about once a second: the worse of what the server misses of its uplink and the worst any listener reports of
/// its downlink (docs/media.md, "Redundancy").
///
/// - From 2 % of packets lost in a report, each packet repeats the frame before it: a lone loss is then rebuilt
///   exactly from the next packet, where FEC would give a frame of lower quality.
/// - From 17 % on average over the last three reports, two frames: losses of two packets in a row, common at such
///   rates, are rebuilt too. The average keeps a 10 % loss, whose one-second reports swing past 17 % now and
///   then, at one frame (twice the bitrate, not three times, and no longer a wait).
/// - Up at once; down one step only after `holdReports` reports in a row that ask for less, so a loss that comes
///   and goes does not switch it on and off every second. Off again, a clean network costs nothing.
public struct RedundancyPolicy: Sendable, Equatable {
    /// The loss (percent) from which each packet repeats one earlier frame.
    public static let oneFrameFrom = 2
    /// The mean loss (percent) over the last `averagedReports` from which it repeats two.
    public static let twoFramesFrom = 17
    /// Reports the two-frame decision averages.
    public static let averagedReports = 3
    /// Reports in a row asking for less before the redundancy steps down.
    public static let holdReports = 5

    /// Earlier frames each packet repeats now: 0, 1 or 2.
    public private(set) var level = 0
    private var lowerReports = 0
    private var recent: [Int] = []

    /// No redundancy.
    public init() {}

    /// One report of the loss on the stream.
    public mutating func report(lossPercent percent: Int) {
        recent.append(percent)
        if recent.count > Self.averagedReports { recent.removeFirst() }
        let mean = recent.count == Self.averagedReports ? recent.reduce(0, +) / Self.averagedReports : 0
        let wanted = mean >= Self.twoFramesFrom ? 2 : percent >= Self.oneFrameFrom ? 1 : 0
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
