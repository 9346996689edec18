import AudioCodec
import AudioCore
import BenchmarkSupport
import Foundation
import Platform
import RoomTesting
import StreamOutputs
import Synchronization

/// The "nothing lost" part of `clubroom bench stream`: the three live outputs and the Ogg Opus file fed together, a
/// frame every 20 ms, for the whole run, each stream read back by ffmpeg from before its first frame to its end.
/// Per output: the frames offered against those its destination took, the frames dropped (queue overflows) or not
/// sent while it was down, and the length ffmpeg decoded against the run's.
enum LosslessRun {
    /// What one output did over the run.
    struct Outcome {
        var name: String
        var offered: Int
        var sent: Int
        var dropped: Int
        var notSentWhileDown: Int
        /// Samples ffmpeg decoded from the stream.
        var readBack: Int
        /// Samples a reader decodes from a whole stream of the run: the run's own, and the codec's padding.
        var expected: Int

        /// What a whole stream of `samples` decodes to: Ogg Opus carries the exact length (its pre-skip and end
        /// trimming); AAC in MPEG-TS or FLV carries neither, so a reader gets the encoder's 1024 samples of priming
        /// and the last block filled out to 1024.
        static func expected(samples: Int, aac: Bool) -> Int {
            aac ? ((samples + 1_023) / 1_024 + 1) * 1_024 : samples
        }

        var isWhole: Bool { offered == sent && dropped == 0 && notSentWhileDown == 0 && readBack == expected }
    }

    struct Servers {
        var folder: String
        var icecastPort: Int
        var icecastPassword: String
        var rtmpPort: Int
        var webPort: Int
        var hlsRoot: String
    }

    static func run(seconds: Int, _ servers: Servers) throws -> (rows: [BenchmarkReport.Row], note: String) {
        let mount = "lossless.opus"
        let hls = servers.hlsRoot + "/lossless"
        let live = Mutex<Set<String>>([])
        func started(_ destination: StreamDestination) -> LiveOutput {
            StreamOutputs.start(destination) { report in
                if report.state == .live { live.withLock { _ = $0.insert(report.destination) } }
            }
        }
        let outputs: [(String, LiveOutput)] = [
            (
                "Icecast",
                started(
                    try .icecast(
                        "icecast://source:\(servers.icecastPassword)@127.0.0.1:\(servers.icecastPort)/\(mount)"))
            ),
            ("HLS", started(try .hls(hls))),
            ("RTMP", started(try .rtmp("rtmp://127.0.0.1:\(servers.rtmpPort)/live/lossless"))),
        ]
        let file = try OggOpusWriter(path: servers.folder + "/lossless.opus", tags: [])
        defer { for (_, output) in outputs { try? output.close() } }
        guard waitUntil(limit: 30, { live.withLock { $0.count } == outputs.count }) else {
            throw StreamBenchmark.Failure(description: "not every output went live: \(live.withLock { $0 })")
        }

        // The Icecast and RTMP readers are there before the first frame; the HLS one starts at the playlist's
        // first segment, which stays listed for 12 s.
        let icecastReader = try ClickReader(
            "http://127.0.0.1:\(servers.icecastPort)/\(mount)", options: [], whole: true)
        let rtmpReader = try ClickReader(
            "rtmp://127.0.0.1:\(servers.rtmpPort)/live/lossless", options: ["-analyzeduration", "1000000"], whole: true)
        var readers = [icecastReader, rtmpReader]
        defer { for reader in readers { reader.stop() } }
        let rtmpLog = servers.folder + "/rtmp/nginx-error.log"
        guard
            waitUntil(
                limit: 30,
                {
                    icecastListeners(port: servers.icecastPort, mount: mount) == 1
                        && ((try? String(contentsOfFile: rtmpLog, encoding: .utf8)) ?? "").contains(
                            "play: name='lossless'")
                })
        else { throw StreamBenchmark.Failure(description: "ffmpeg did not start reading Icecast and RTMP") }

        let feeder = ClickFeeder(SendableOutput(Fanout(outputs.map(\.1) + [file])))
        defer { feeder.stop() }
        guard
            waitUntil(
                limit: 30,
                {
                    ((try? FileManager.default.contentsOfDirectory(atPath: hls)) ?? []).contains { $0.hasSuffix(".ts") }
                })
        else { throw StreamBenchmark.Failure(description: "no HLS segment was written") }
        let hlsReader = try ClickReader(
            "http://127.0.0.1:\(servers.webPort)/lossless/live.m3u8", options: ["-live_start_index", "0"], whole: true)
        readers.append(hlsReader)
        usleep(UInt32(seconds) * 1_000_000)
        feeder.stop()
        let frames = feeder.framesFed.load(ordering: .relaxed)
        let runSeconds = Double(frames * AudioFormat.frameMilliseconds) / 1_000
        for (_, output) in outputs { try output.close() }
        try file.close()
        // A reader meets the end of an Icecast or HLS stream when its source ends; ffmpeg reading RTMP from
        // nginx-rtmp waits on after the publisher left. So each reader is waited for until it ended or decoded
        // the whole stream, and a second more for anything past the end.
        let samples = frames * AudioFormat.samplesPerFrame
        let whole = [(icecastReader, false), (rtmpReader, true), (hlsReader, true)].map {
            ($0.0, Outcome.expected(samples: samples, aac: $0.1))
        }
        _ = waitUntil(limit: 60) {
            whole.allSatisfy { $0.ended.load(ordering: .relaxed) || $0.samples.load(ordering: .relaxed) >= $1 }
        }
        usleep(1_000_000)

        let outcomes = zip(outputs, [icecastReader, hlsReader, rtmpReader]).map { named, reader in
            Outcome(
                name: named.0, offered: named.1.offeredFrames, sent: named.1.sentFrames,
                dropped: named.1.droppedFrames, notSentWhileDown: named.1.framesNotSentWhileDown,
                readBack: reader.samples.load(ordering: .relaxed),
                expected: Outcome.expected(samples: samples, aac: named.0 != "Icecast"))
        }
        let rate = Double(AudioFormat.sampleRate)
        var rows: [BenchmarkReport.Row] = [.init("nothing lost: the run", runSeconds, "s")]
        for outcome in outcomes {
            let name = outcome.name
            rows += [
                .init("\(name): frames offered", Double(outcome.offered), "frames"),
                .init(
                    "\(name): frames delivered", Double(outcome.sent), "frames", target: Double(outcome.offered),
                    goal: .atLeast),
                .init("\(name): dropped (queue overflow)", Double(outcome.dropped), "frames", target: 0),
                .init("\(name): not sent while down", Double(outcome.notSentWhileDown), "frames", target: 0),
                .init("\(name): read back by ffmpeg", Double(outcome.readBack) / rate, "s"),
                .init("\(name): expected (the run + codec padding)", Double(outcome.expected) / rate, "s"),
                .init(
                    "\(name): read back off the expected", Double(abs(outcome.readBack - outcome.expected)),
                    "samples", target: 0),
            ]
        }
        let lost = outcomes.filter { !$0.isWhole }.map(\.name)
        let note =
            lost.isEmpty
            ? "nothing lost: over \(runSeconds) s every output delivered each of its \(frames) frames and ffmpeg read "
                + "each stream back whole (the run's length, with its codec's padding)"
            : "LOST on \(lost.joined(separator: ", ")): see the rows above"
        return (rows, note)
    }

    /// The listeners Icecast counts on `mount`, from its status page; nil when it cannot be read.
    static func icecastListeners(port: Int, mount: String) -> Int? {
        guard let body = httpGet(port: port, path: "/status-json.xsl"),
            let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let stats = object["icestats"] as? [String: Any]
        else { return nil }
        let sources = (stats["source"] as? [[String: Any]]) ?? (stats["source"] as? [String: Any]).map { [$0] } ?? []
        let source = sources.first { ($0["listenurl"] as? String)?.hasSuffix("/" + mount) == true }
        return (source?["listeners"] as? NSNumber)?.intValue
    }

    /// The body of `GET path` from 127.0.0.1:`port` over HTTP/1.0, or nil.
    static func httpGet(port: Int, path: String) -> String? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let connected = connectIPv4(descriptor, host: "127.0.0.1", port: port) == 0
        guard connected else { return nil }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard send(descriptor, request, request.count, 0) == request.count else { return nil }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            response += buffer.prefix(count)
        }
        let text = String(decoding: response, as: UTF8.self)
        return text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) }
    }
}

/// Every frame to each of `outputs`, in turn, as the recorder hands its mix to its outputs.
final class Fanout: MixOutput {
    let outputs: [any MixOutput]
    init(_ outputs: [any MixOutput]) { self.outputs = outputs }

    func write(_ frame: [Int16], offset: Int64) throws {
        for output in outputs { try output.write(frame, offset: offset) }
    }

    func close() throws {
        for output in outputs { try output.close() }
    }
}
