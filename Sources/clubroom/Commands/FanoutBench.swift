import Benchmarks
import MediaServer

/// Runs the fanout benchmark and shapes its figures into the shared report (targets from the media issue).
func fanoutReport(speakers: Int, listeners: Int, seconds: Int) throws -> BenchmarkReport {
    let result = try FanoutBenchmark.run(speakers: speakers, listeners: listeners, seconds: seconds)
    // Both forwarders carry the same offered load over the same sockets: the ratio of what reached the listeners.
    let ratio =
        result.raw.forwardedPerSecond > 0 ? result.forwarder.forwardedPerSecond / result.raw.forwardedPerSecond : 0
    var rows: [BenchmarkReport.Row] = [
        .init("offered load", result.offeredPerSecond, "datagrams/s"),
        .init("forwarded (SRTP on)", result.forwarder.forwardedPerSecond, "datagrams/s"),
        .init("loss (SRTP on)", result.forwarder.lossFraction * 100, "%", target: 0.1),
        .init("server CPU (forwarding thread)", result.forwarder.cpuFraction * 100, "% of a core"),
        .init("capacity (SRTP on)", result.forwarder.capacityPerCPUSecond, "datagrams/CPU-s"),
        .init("raw forwarded", result.raw.forwardedPerSecond, "datagrams/s"),
        .init("raw loss", result.raw.lossFraction * 100, "%"),
        .init("raw CPU", result.raw.cpuFraction * 100, "% of a core"),
        .init("raw ceiling (capacity)", result.raw.capacityPerCPUSecond, "datagrams/CPU-s"),
        .init("ratio to the raw forwarder", ratio, "×", target: 0.8, goal: .atLeast),
        .init(
            "capacity ratio (per CPU-second)",
            result.raw.capacityPerCPUSecond > 0
                ? result.forwarder.capacityPerCPUSecond / result.raw.capacityPerCPUSecond : 0, "×"),
        .init("server memory per peer", result.bytesPerListener / 1024, "KiB", target: 30),
    ]
    for counter in result.counters where counter.value > 0 {
        rows.append(.init("counter \(counter.name)", Double(counter.value), "packets"))
    }
    #if DEBUG
    let build = "debug build: run 'swift build -c release' for real figures"
    #else
    let build = "release build"
    #endif
    return BenchmarkReport(
        name: "fanout: \(speakers) speakers × \(listeners) listeners, \(seconds) s per forwarder",
        rows: rows,
        notes: [
            build,
            "packets of about 100 bytes every 20 ms per speaker; receivers count in 2 threads of this process",
            "capacity = forwarded datagrams per second of forwarding-thread CPU; the raw forwarder only receives and sends",
            "thread CPU leaves out loopback delivery the kernel defers to ksoftirqd; on a busy machine loss comes from the"
                + " kernel's backlog (net.core.netdev_max_backlog) for both forwarders",
        ])
}
