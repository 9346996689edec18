import BenchmarkSupport

extension FanoutBenchmark {
    /// Runs the fanout benchmark and shapes its figures into the shared report.
    public static func report(speakers: Int, listeners: Int, seconds: Int) throws -> BenchmarkReport {
        let result = try run(speakers: speakers, listeners: listeners, seconds: seconds)
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
        for (name, figures) in [("SRTP", result.forwarder), ("raw", result.raw)] {
            let legs = figures.legs
            let kernel = figures.kernel
            rows += [
                .init("\(name): late (after the grace)", figures.lateFraction * 100, "%"),
                .init("\(name): never arrived", figures.droppedFraction * 100, "%"),
                .init("\(name): forwarder waiting for a CPU", figures.waitFraction * 100, "% of the time"),
                .init("\(name): receiving thread CPU", figures.receiverCPUFraction * 100, "% of a core"),
                .init("\(name): whole process CPU", figures.processCPUFraction * 100, "% of a core"),
                .init("\(name): speaker packets sent", Double(legs.speakerPackets), "packets"),
                .init("\(name): refused to the speakers", Double(legs.speakerSendFailures), "packets"),
                .init("\(name): read by the forwarder in time", Double(legs.reachedForwarderInTime), "packets"),
                .init("\(name): read by the forwarder in all", Double(legs.reachedForwarder), "packets"),
                .init("\(name): handed to the kernel", Double(legs.forwarderSent), "datagrams"),
                .init("\(name): refused to the forwarder", Double(legs.forwarderSendDropped), "datagrams"),
                .init("\(name): read by listeners in time", Double(legs.listenerDatagramsInTime), "datagrams"),
                .init("\(name): read by listeners in all", Double(legs.listenerDatagrams), "datagrams"),
                .init("\(name): kernel backlog drops", Double(kernel.backlogDropped), "packets"),
                .init("\(name): kernel receive squeezes", Double(kernel.squeezed), "times"),
                .init("\(name): UDP receive-queue drops", Double(kernel.udpReceiveBufferErrors), "datagrams"),
                .init("\(name): UDP in errors", Double(kernel.udpInErrors), "datagrams"),
                .init("\(name): UDP to no port", Double(kernel.udpNoPorts), "datagrams"),
                .init("\(name): UDP send-queue errors", Double(kernel.udpSendBufferErrors), "datagrams"),
            ]
        }
        for counter in result.counters where counter.value > 0 {
            rows.append(.init("counter \(counter.name)", Double(counter.value), "packets"))
        }
        return BenchmarkReport(
            name: "fanout: \(speakers) speakers × \(listeners) listeners, \(seconds) s per forwarder",
            rows: rows,
            notes: [
                buildNote,
                "packets of about 100 bytes every 20 ms per speaker, spread over the frame; one thread reads every"
                    + " listener socket in turn every 20 ms",
                "the forwarders take turns in slices of up to 2 s; loss = not read within 0.5 s of a slice's end (late"
                    + " or never); the kernel counters are the whole machine's",
                "capacity = datagrams per second of forwarding-thread CPU, which includes the loopback delivery the"
                    + " kernel runs on that thread",
            ])
    }
}
