/// The live outputs a recorder feeds beside its file: each a `LiveOutput` on a thread of its own.
public enum StreamOutputs {
    /// HLS segments of about 2 s, 6 of them in the playlist (12 s a player can start from).
    public static let hlsSegmentSeconds = 2
    public static let hlsListSize = 6

    /// The output for `destination`, started; `report` hears each change of its state, on the output's thread.
    public static func start(
        _ destination: StreamDestination, backoff: StreamBackoff = .standard,
        report: @escaping @Sendable (StreamReport) -> Void
    ) -> LiveOutput {
        LiveOutput(
            name: destination.name, backoff: backoff,
            makeSink: { interrupt in
                switch destination {
                case .icecast(let address): return IcecastSink(address)
                case .hls(let directory):
                    return AACStreamSink(
                        .hls(directory: directory, segmentSeconds: hlsSegmentSeconds, listSize: hlsListSize),
                        interrupt: interrupt)
                case .rtmp(let url): return AACStreamSink(.rtmp(url: url), interrupt: interrupt)
                }
            }, report: report)
    }
}
