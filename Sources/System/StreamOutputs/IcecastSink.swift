import AudioCore
import COpusEnc
import CShout
import Glibc

/// Ogg Opus to an Icecast mount as its source: libopusenc writes the Ogg pages through its callback API and each
/// page goes straight to libshout. One instance is one connection; it is used on its output's thread only.
final class IcecastSink: StreamSink {
    /// Opus's bit rate for the room's mono voice.
    static let bitRate: Int32 = 48_000
    /// A page leaves at most 200 ms after its first sample, so a listener is about that far behind the encoder.
    static let pageDelaySamples: Int32 = 9_600

    private let address: IcecastAddress
    private var shout: OpaquePointer?
    private var encoder: OpaquePointer?
    private var comments: OpaquePointer?
    /// The first failure of a page's send, kept by the write callback for `send` to throw.
    private var sendError: StreamError?

    init(_ address: IcecastAddress) {
        self.address = address
        _ = Self.setUp
    }

    /// libshout's one-time set-up, and writes to a closed socket failing with EPIPE rather than ending the process.
    private static let setUp: Void = {
        shout_init()
        signal(SIGPIPE, SIG_IGN)
    }()

    deinit { release() }

    func open() throws(StreamError) {
        guard let shout = shout_new() else { throw .library(place: "shout_new", detail: "out of memory") }
        self.shout = shout
        try set(shout_set_host(shout, address.host), "host")
        try set(shout_set_port(shout, UInt16(address.port)), "port")
        try set(shout_set_user(shout, address.user), "user")
        try set(shout_set_password(shout, address.password), "password")
        try set(shout_set_mount(shout, address.mount), "mount")
        try set(shout_set_protocol(shout, UInt32(SHOUT_PROTOCOL_HTTP)), "protocol")
        try set(shout_set_content_format(shout, UInt32(SHOUT_FORMAT_OGG), UInt32(SHOUT_USAGE_AUDIO), nil), "format")
        try set(shout_set_tls(shout, SHOUT_TLS_DISABLED), "tls")
        try set(shout_set_meta(shout, SHOUT_META_NAME, "Clubroom"), "name")
        let opened = shout_open(shout)
        guard opened == SHOUTERR_SUCCESS else { throw error(opened, connecting: true) }

        guard let comments = ope_comments_create() else {
            throw .library(place: "ope_comments_create", detail: "out of memory")
        }
        self.comments = comments
        _ = ope_comments_add(comments, "ENCODER", "Clubroom")
        var callbacks = OpusEncCallbacks(
            write: { user, bytes, count in
                guard let user, let bytes else { return 1 }
                return Unmanaged<IcecastSink>.fromOpaque(user).takeUnretainedValue().sendPage(bytes, Int(count))
            },
            close: { _ in 0 })
        var status: Int32 = 0
        encoder = ope_encoder_create_callbacks(
            &callbacks, Unmanaged.passUnretained(self).toOpaque(), comments, Int32(AudioFormat.sampleRate), 1, 0,
            &status)
        guard let encoder, status == OPE_OK else {
            throw .library(place: "ope_encoder_create_callbacks", detail: Self.text(status))
        }
        _ = clubroom_ope_set_muxing_delay(encoder, Self.pageDelaySamples)
        _ = clubroom_ope_set_decision_delay(encoder, Int32(AudioFormat.samplesPerFrame))
        _ = clubroom_ope_set_bitrate(encoder, Self.bitRate)
        let flushed = ope_encoder_flush_header(encoder)
        if let sendError { throw sendError }
        guard flushed == OPE_OK else { throw .library(place: "ope_encoder_flush_header", detail: Self.text(flushed)) }
    }

    func send(_ frame: [Int16]) throws(StreamError) {
        guard let encoder else { throw .library(place: "send", detail: "the stream is not open") }
        let written = frame.withUnsafeBufferPointer {
            ope_encoder_write(encoder, $0.baseAddress, Int32($0.count))
        }
        if let sendError { throw sendError }
        guard written == OPE_OK else { throw .library(place: "ope_encoder_write", detail: Self.text(written)) }
    }

    func finish() {
        if let encoder, sendError == nil, shout != nil { _ = ope_encoder_drain(encoder) }
        release()
    }

    /// libopusenc's write callback: one Ogg page (or part of one) to the server. Nonzero stops the encoder.
    private func sendPage(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
        guard sendError == nil, let shout else { return 1 }
        let sent = shout_send(shout, bytes, count)
        guard sent == SHOUTERR_SUCCESS else {
            sendError = error(sent, connecting: false)
            return 1
        }
        return 0
    }

    private func release() {
        if encoder != nil {
            ope_encoder_destroy(encoder)
            encoder = nil
        }
        if comments != nil {
            ope_comments_destroy(comments)
            comments = nil
        }
        if let shout {
            _ = shout_close(shout)
            shout_free(shout)
            self.shout = nil
        }
    }

    private func set(_ result: Int32, _ what: String) throws(StreamError) {
        guard result != SHOUTERR_SUCCESS else { return }
        throw .badDestination(text: "the Icecast \(what)", problem: lastError)
    }

    private var lastError: String { shout.flatMap { shout_get_error($0) }.map { String(cString: $0) } ?? "unknown" }

    private func error(_ code: Int32, connecting: Bool) -> StreamError {
        switch code {
        case SHOUTERR_NOLOGIN: return .passwordRefused
        case SHOUTERR_NOCONNECT: return .unreachable(detail: lastError)
        case SHOUTERR_BUSY: return .refused(detail: "the mount is busy")
        case SHOUTERR_SOCKET where connecting: return .unreachable(detail: lastError)
        case SHOUTERR_SOCKET: return .dropped(detail: lastError)
        default: return connecting ? .refused(detail: lastError) : .dropped(detail: lastError)
        }
    }

    private static func text(_ code: Int32) -> String {
        ope_strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
