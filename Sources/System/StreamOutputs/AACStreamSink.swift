import AudioCore
import CFFmpeg
import Glibc

/// AAC-LC through FFmpeg's libraries, muxed as HLS (MPEG-TS segments and a sliding playlist) or as FLV to an RTMP
/// server. One instance is one connection (or one run of the playlist); it is used on its output's thread only.
final class AACStreamSink: StreamSink {
    enum Kind {
        /// `DIR/live.m3u8` with `DIR/live-N.ts`, segments of about `segmentSeconds`, `listSize` of them listed.
        case hls(directory: String, segmentSeconds: Int, listSize: Int)
        case rtmp(url: String)
    }

    /// AAC's bit rate for the room's mono voice.
    static let bitRate = 64_000

    private let kind: Kind
    private let interrupt: StreamInterrupt
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var stream: UnsafeMutablePointer<AVStream>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var headerWritten = false
    private var failed = false
    private var pending: [Float] = []
    private var nextTimestamp: Int64 = 0
    private var frameSize = 1024

    init(_ kind: Kind, interrupt: StreamInterrupt) {
        self.kind = kind
        self.interrupt = interrupt
        _ = Self.quietLibraries
    }

    /// FFmpeg's own log would write to the terminal; its errors reach us as return codes instead.
    private static let quietLibraries: Void = av_log_set_level(AV_LOG_QUIET)

    deinit { release() }

    func open() throws(StreamError) {
        let (formatName, url) =
            switch kind {
            case .hls(let directory, _, _): ("hls", directory + "/live.m3u8")
            case .rtmp(let url): ("flv", url)
            }
        if case .hls(let directory, _, _) = kind, mkdir(directory, 0o755) != 0, errno != EEXIST {
            throw .cannotWrite(detail: "\(directory): \(String(cString: strerror(errno)))")
        }
        try check(avformat_alloc_output_context2(&format, nil, formatName, url), "avformat_alloc_output_context2")
        guard let format, let encoder = avcodec_find_encoder(AV_CODEC_ID_AAC) else {
            throw .library(place: "avcodec_find_encoder", detail: "this FFmpeg has no AAC encoder")
        }
        guard let codec = avcodec_alloc_context3(encoder) else {
            throw .library(place: "avcodec_alloc_context3", detail: "out of memory")
        }
        self.codec = codec
        codec.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        codec.pointee.sample_rate = Int32(AudioFormat.sampleRate)
        av_channel_layout_default(&codec.pointee.ch_layout, 1)
        codec.pointee.bit_rate = Int64(Self.bitRate)
        codec.pointee.time_base = AVRational(num: 1, den: Int32(AudioFormat.sampleRate))
        if format.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            codec.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        }
        try check(avcodec_open2(codec, encoder, nil), "avcodec_open2")
        frameSize = max(1, Int(codec.pointee.frame_size))

        guard let stream = avformat_new_stream(format, nil) else {
            throw .library(place: "avformat_new_stream", detail: "out of memory")
        }
        self.stream = stream
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, codec), "avcodec_parameters_from_context")
        stream.pointee.time_base = codec.pointee.time_base

        format.pointee.interrupt_callback = AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 0 }
                return Unmanaged<StreamInterrupt>.fromOpaque(opaque).takeUnretainedValue().isSet ? 1 : 0
            }, opaque: Unmanaged.passUnretained(interrupt).toOpaque())

        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        switch kind {
        case .hls(let directory, let segmentSeconds, let listSize):
            av_dict_set(&options, "hls_time", String(segmentSeconds), 0)
            av_dict_set(&options, "hls_list_size", String(listSize), 0)
            // Old segments are deleted as they leave the playlist, each is written under a temporary name and
            // renamed when complete (a web server never serves half a segment), and numbering starts from the
            // clock so a restarted stream never reuses a name a player has cached.
            av_dict_set(&options, "hls_flags", "delete_segments+temp_file+independent_segments+program_date_time", 0)
            av_dict_set(&options, "hls_start_number_source", "epoch", 0)
            av_dict_set(&options, "hls_segment_filename", directory + "/live-%d.ts", 0)
            av_dict_set(&options, "hls_allow_cache", "0", 0)
        case .rtmp:
            // Every packet leaves at once (no 32 KB write buffer between the room and the server).
            format.pointee.flags |= AVFMT_FLAG_FLUSH_PACKETS
            var ioOptions: OpaquePointer?
            defer { av_dict_free(&ioOptions) }
            // A server that stops reading fails the write after 5 s rather than stalling the output for ever.
            av_dict_set(&ioOptions, "rw_timeout", "5000000", 0)
            try check(
                avio_open2(&format.pointee.pb, url, AVIO_FLAG_WRITE, &format.pointee.interrupt_callback, &ioOptions),
                "avio_open2", connecting: true)
        }
        try check(avformat_write_header(format, &options), "avformat_write_header", connecting: true)
        headerWritten = true

        guard let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            throw .library(place: "av_frame_alloc", detail: "out of memory")
        }
        self.frame = frame
        self.packet = packet
        frame.pointee.nb_samples = Int32(frameSize)
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.sample_rate = codec.pointee.sample_rate
        try check(av_channel_layout_copy(&frame.pointee.ch_layout, &codec.pointee.ch_layout), "av_channel_layout_copy")
        try check(av_frame_get_buffer(frame, 0), "av_frame_get_buffer")
        pending.reserveCapacity(frameSize + AudioFormat.samplesPerFrame)
    }

    func send(_ samples: [Int16]) throws(StreamError) {
        for sample in samples { pending.append(Float(sample) / 32_768) }
        while pending.count >= frameSize {
            try encode(Array(pending.prefix(frameSize)))
            pending.removeFirst(frameSize)
        }
    }

    func finish() {
        if headerWritten, !failed, let codec, let format {
            // The encoder's last frames, then the muxer's end (the playlist's #EXT-X-ENDLIST).
            if !pending.isEmpty {
                try? encode(pending + [Float](repeating: 0, count: frameSize - pending.count))
                pending.removeAll()
            }
            if avcodec_send_frame(codec, nil) >= 0 { try? drainPackets() }
            if !failed { av_write_trailer(format) }
        }
        release()
    }

    private func encode(_ block: [Float]) throws(StreamError) {
        guard let codec, let frame else { throw .library(place: "encode", detail: "the stream is not open") }
        try check(av_frame_make_writable(frame), "av_frame_make_writable")
        guard let data = frame.pointee.data.0 else { throw .library(place: "AVFrame", detail: "no sample buffer") }
        data.withMemoryRebound(to: Float.self, capacity: block.count) { target in
            block.withUnsafeBufferPointer { target.update(from: $0.baseAddress!, count: block.count) }
        }
        frame.pointee.pts = nextTimestamp
        nextTimestamp += Int64(block.count)
        try check(avcodec_send_frame(codec, frame), "avcodec_send_frame")
        try drainPackets()
    }

    private func drainPackets() throws(StreamError) {
        guard let codec, let packet, let format, let stream else { return }
        while true {
            let received = avcodec_receive_packet(codec, packet)
            if received == clubroom_averror_eagain() || received == clubroom_averror_eof() { return }
            try check(received, "avcodec_receive_packet")
            av_packet_rescale_ts(packet, codec.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = stream.pointee.index
            let written = av_interleaved_write_frame(format, packet)
            if written < 0 { failed = true }
            try check(written, "av_interleaved_write_frame", sending: true)
        }
    }

    private func release() {
        if case .rtmp = kind, let format, format.pointee.pb != nil { avio_closep(&format.pointee.pb) }
        if format != nil {
            avformat_free_context(format)
            format = nil
        }
        if codec != nil { avcodec_free_context(&codec) }
        if frame != nil { av_frame_free(&frame) }
        if packet != nil { av_packet_free(&packet) }
        stream = nil
    }

    /// Turns FFmpeg's return code into a `StreamError` that says what happened to the stream.
    private func check(
        _ code: Int32, _ place: String, connecting: Bool = false, sending: Bool = false
    )
        throws(StreamError)
    {
        guard code < 0 else { return }
        throw Self.error(code, place: place, kind: kind, connecting: connecting, sending: sending)
    }

    static func error(_ code: Int32, place: String, kind: Kind, connecting: Bool, sending: Bool) -> StreamError {
        let text = Self.text(code)
        let number = clubroom_averror_errno(code)
        if case .hls = kind, connecting || sending { return .cannotWrite(detail: text) }
        if connecting, [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT].contains(number) {
            return .unreachable(detail: text)
        }
        if [EPIPE, ECONNRESET, ETIMEDOUT, ECONNABORTED].contains(number) { return .dropped(detail: text) }
        if connecting { return .refused(detail: text) }
        if sending { return .dropped(detail: text) }
        return .library(place: place, detail: text)
    }

    static func text(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard av_strerror(code, &buffer, buffer.count) == 0 else { return "error \(code)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
