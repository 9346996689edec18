import Arguments
import AudioDevices
import Foundation
import ProcessSignals
import RoomCore
import RoomProtocol
import RoomRecorder
import StreamOutputs
import WebSocket

/// `clubroom record`: a recorder, a participant of the room that keeps it in an Ogg Opus file and its record.
enum RecordCommand: ClubroomCommand {
    static let declaration = Command(
        name: "record", abstract: "Record a room to an Ogg Opus file and its record, or stream it live.",
        discussion: """
            Joins the room as its recorder (role recorder: everyone in the room sees that it is recorded), mixes \
            every speaker as a listener hears them into FILE.opus (Ogg Opus, 48 kHz mono, silence kept), and \
            keeps the room's record beside it in FILE.json: who spoke when, role and topic changes, chat, joins \
            and leaves, and each person's speaking time (docs/recording.md). Both are written as they go: a \
            recorder that is killed leaves a file that plays up to its last second or two, and a readable record.

            The link must let its holder record (a link for role recorder: clubroom invite --role recorder), or \
            give the room's address with a recorder's token (--token-file FILE or CLUBROOM_TOKEN). Ctrl-C or \
            SIGTERM stops the recording cleanly; --seconds N stops it after N seconds of audio.

            The same mix can go out live, to any of --icecast (Ogg Opus to an Icecast mount), --hls (a folder a \
            web server serves) and --rtmp (FLV with AAC to a live platform) at once, beside the file. A \
            destination that refuses or drops the stream is tried again every few seconds and never stops the \
            file or the others; each change is said once on stderr (docs/deploy.md). With a stream, --out may be \
            left out: the room then goes out live only, and no file or record is written.
            """,
        positionals: [
            Positional(
                "link", type: .string, required: false,
                help: "The room's link (with its invite), or its address with --token-file.")
        ],
        options: [
            linkFile.option, out.option, seconds.option, name.option, startedBy.option, tokenFile.option,
            icecast.option, hls.option, rtmp.option, destinationFile.option,
        ])

    static let linkFile = SharedOptions.linkFile
    static let out = TypedOption.path(
        "out", placeholder: "FILE.opus",
        help: "The recording; its record goes beside it as FILE.json. Optional with a stream.")
    static let seconds = TypedOption.integer(
        "seconds", placeholder: "N", in: 1...86_400, help: "Stop after N seconds of audio.")
    static let name = TypedOption.string(
        "name", placeholder: "NAME", default: "Recorder", help: "The name the room shows the recorder with.")
    static let startedBy = TypedOption.string(
        "started-by", placeholder: "ID", help: "Who asked for the recording (the server says so when it starts one).")
    static let tokenFile = SharedOptions.tokenFile
    static let icecast = TypedOption.string(
        "icecast", placeholder: "URL", help: "Stream to icecast://USER:PASSWORD@HOST:PORT/MOUNT.opus as well.")
    static let hls = TypedOption.path(
        "hls", placeholder: "DIR", help: "Write an HLS stream (DIR/live.m3u8, 2 s segments) as well.")
    static let rtmp = TypedOption.string(
        "rtmp", placeholder: "URL", help: "Stream to rtmp://HOST/APP/KEY as well.")

    static let destinationFile = TypedOption.path(
        "destination-file", placeholder: "FILE",
        help:
            "Stream to the destination in FILE as well: NAME=URL as serve's --stream (kept out of ps); with a NAME, "
            + "the recorder joins as that stream of the server's, not as a recording.")

    /// What the recorder is asked to do, as given on the command line.
    struct Options: Equatable {
        var link: JoinCommand.Options.LinkSource
        /// The recording; nil when the room only goes out live.
        var out: String?
        var seconds: Int?
        var name: String
        var startedBy: String?
        var tokenFile: String?
        var icecast: String?
        var hls: String?
        var rtmp: String?
        var destinationFile: String?

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            link = try JoinCommand.Options.LinkSource(arguments, argument: "link")
            out = arguments[RecordCommand.out]
            seconds = arguments[RecordCommand.seconds]
            name = arguments[RecordCommand.name]
            startedBy = arguments[RecordCommand.startedBy]
            tokenFile = arguments[RecordCommand.tokenFile]
            icecast = arguments[RecordCommand.icecast]
            hls = arguments[RecordCommand.hls]
            rtmp = arguments[RecordCommand.rtmp]
            destinationFile = arguments[RecordCommand.destinationFile]
            // The mix has to go somewhere: the file, a stream, or both. The synopsis is quoted by the message.
            if out == nil, icecast == nil, hls == nil, rtmp == nil, destinationFile == nil {
                throw .missingOption(
                    synopsis: "--out FILE.opus', or a stream: '--icecast URL', '--hls DIR' or '--rtmp URL")
            }
        }

        /// The live outputs asked for; a bad one is said without its password or stream key.
        func streams() throws -> [StreamDestination] {
            func read(
                _ option: String, _ parse: () throws(StreamError) -> StreamDestination
            ) throws -> StreamDestination {
                do { return try parse() } catch { throw JoinFailure(text: "--\(option): \(error.reason)") }
            }
            var destinations: [StreamDestination] = []
            if let icecast {
                destinations.append(try read("icecast") { () throws(StreamError) in try .icecast(icecast) })
            }
            if let hls { destinations.append(try read("hls") { () throws(StreamError) in try .hls(hls) }) }
            if let rtmp { destinations.append(try read("rtmp") { () throws(StreamError) in try .rtmp(rtmp) }) }
            if let named = try namedDestination() { destinations.append(named.destination) }
            return destinations
        }

        /// The destination of `--destination-file`: one `NAME=URL` line (or a bare URL, then without a name).
        func namedDestination() throws -> (name: String?, destination: StreamDestination)? {
            guard let path = destinationFile else { return nil }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw JoinFailure(text: "--destination-file \(path): cannot be read; check the path")
            }
            let line = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            do throws(StreamListError) {
                if let equals = line.firstIndex(of: "="), !line[..<equals].contains(":") {
                    let entry = try StreamList.entry(line)
                    return (entry.name, entry.destination)
                }
                return (nil, try StreamList.destination(line, name: "the destination"))
            } catch {
                throw JoinFailure(text: "--destination-file \(path): \(error.message)")
            }
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let options = try Options(arguments)
        // A file that cannot be written is said before anyone in the room is told it is recorded.
        if let out = options.out {
            if let problem = WAVFileOutput.problemWriting(path: out) {
                throw JoinFailure(text: "--out \(out): the recording cannot be written, because \(problem)")
            }
            let record = RecordingRecord.path(forAudio: out)
            if let problem = WAVFileOutput.problemWriting(path: record) {
                throw JoinFailure(text: "\(record): the room's record cannot be written, because \(problem)")
            }
        }
        let streams = try options.streams()
        let link = try readLink(try JoinCommand.linkText(options.link))
        guard let room = link.room else {
            throw JoinFailure(text: "A recorder records one room: give the room's link, not the server's.")
        }
        let entry = try recorderEntry(link: link, options: options)
        let credential = try entry.credential(forRoom: room, at: link.server)
        var headers = credential.headers
        if let startedBy = options.startedBy {
            headers.add(ControlCodec.startedByHeader, ControlCodec.encodeStartedBy(PeerID(startedBy)))
        }
        // A stream of the server's says which: the server counts it as that stream, not as a recording.
        let streamName = try options.namedDestination()?.name
        if let streamName { headers.add(ControlCodec.streamHeader, streamName) }
        let statusSink = StatusSink()
        ignoreBrokenPipes()
        let recorder = RoomRecorder(
            settings: RoomRecorder.Settings(
                url: link.url, token: credential.token, headers: headers, audioPath: options.out,
                seconds: options.seconds,
                outputs: streams.map { destination in
                    {
                        StreamOutputs.start(destination) { report in
                            writeError(report.sentence + "\n")
                            // A stream of the server's tells the room's hosts, by the name they know it by.
                            if let streamName {
                                var named = report
                                named.destination = streamName
                                statusSink.recorder?.report(streamStatus: named.sentence)
                            }
                        }
                    }
                }),
            log: { line in writeError(line + "\n") })
        statusSink.recorder = recorder
        // A server's own recorder (it says who started it) is stopped by its server: who stopped the recording and
        // the room's end come as the room's word too, so a signal alone is the server stopping.
        let stopped = options.startedBy == nil ? "it was stopped" : "the server stopped"
        let signals = SignalWatcher(firstOf: [.interrupt, .terminate, .hangUp]) { _ in recorder.stop(stopped) }
        let outcome = await Task.detached { recorder.run() }.value
        signals.cancel()
        switch outcome {
        case .finished(let milliseconds, let why):
            if let out = options.out {
                writeError(
                    "Recorded \(spokenLength(milliseconds)) of \(room) to \(out) "
                        + "(its record: \(RecordingRecord.path(forAudio: out))); the recording ended because \(why).\n")
            } else {
                writeError(
                    "Streamed \(spokenLength(milliseconds)) of \(room) (no file, no record); "
                        + "the recording ended because \(why).\n")
            }
            return .success
        case .failed(let sentence):
            throw JoinFailure(text: sentence)
        }
    }

    /// How the recorder gets in: the link's invite, else a token from `--token-file` or `CLUBROOM_TOKEN`.
    static func recorderEntry(link: ClubroomLink, options: Options) throws -> Entry {
        if let invite = link.invite {
            if options.tokenFile != nil {
                throw JoinFailure(text: "The link carries its own invite; leave out --token-file.")
            }
            return Entry(kind: .invite(invite), guestName: options.name)
        }
        let text: String
        if let path = options.tokenFile {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw JoinFailure(text: "cannot read the token file \(path); check the path")
            }
            text = String(decoding: data, as: UTF8.self)
        } else if let token = ProcessInfo.processInfo.environment["CLUBROOM_TOKEN"] {
            text = token
        } else {
            throw JoinFailure(
                text: "Recording needs a link with a recorder's invite (clubroom invite --role recorder), "
                    + "--token-file FILE or CLUBROOM_TOKEN.")
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw JoinFailure(text: "the token is empty; give a recorder's token") }
        return Entry(
            kind: RoomToken.looksLikeInvite(token) ? .invite(token) : .roomToken(token), guestName: options.name)
    }

    /// "1 min 2 s", "3.4 s".
    static func spokenLength(_ milliseconds: Int64) -> String {
        let seconds = Double(milliseconds) / 1000
        guard seconds >= 60 else { return String(format: "%.1f s", seconds) }
        let whole = Int(seconds.rounded())
        return whole >= 3600
            ? "\(whole / 3600) h \(whole % 3600 / 60) min" : "\(whole / 60) min \(whole % 60) s"
    }
}

/// Where a stream's changes go once the recorder exists: its outputs are made before it is.
private final class StatusSink: @unchecked Sendable {
    private let lock = NSLock()
    private var held: RoomRecorder?
    var recorder: RoomRecorder? {
        get { lock.withLock { held } }
        set { lock.withLock { held = newValue } }
    }
}
