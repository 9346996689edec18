/// A property that did not hold for one input: what was expected and what came out instead.
public struct FuzzFailure: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// One fuzz target: a decoder that reads bytes from the network or from a file, and the properties its results
/// must have for any input. A crash, a trap or a broken property is a finding; a clean refusal is not.
///
/// The same check runs under libFuzzer (`make fuzz`, the `clubroom-fuzz` executable built with
/// `-sanitize=fuzzer,address`) and in the ordinary tests, which replay the checked-in corpus and every input
/// that once failed (`fuzz/corpus/NAME`, `fuzz/regressions/NAME`). See docs/fuzzing.md.
public struct FuzzTarget: Sendable {
    /// The target's name: its corpus folder and the value of `FUZZ_TARGET`.
    public let name: String
    /// What the target feeds and what it checks, in one line.
    public let summary: String
    private let body: @Sendable ([UInt8]) throws(FuzzFailure) -> Void
    private let makeSeeds: @Sendable () -> [[UInt8]]

    init(
        _ name: String, _ summary: String, seeds: @escaping @Sendable () -> [[UInt8]],
        check: @escaping @Sendable ([UInt8]) throws(FuzzFailure) -> Void
    ) {
        self.name = name
        self.summary = summary
        self.body = check
        self.makeSeeds = seeds
    }

    /// Runs the target's checks on one input.
    public func check(_ input: [UInt8]) throws(FuzzFailure) {
        try body(input)
    }

    /// Inputs built the way the tests build them (frames, handshakes, the documented messages, tokens, packets,
    /// files), from which the checked-in corpus was written.
    public var seeds: [[UInt8]] { makeSeeds() }

    /// Every target, in the order `make fuzz` runs them.
    public static let all: [FuzzTarget] = [
        FuzzTarget(
            "websocket-decoder",
            "WebSocket frames as either side reads them: whole, split and byte by byte agree; re-encoded messages "
                + "decode the same", seeds: WebSocketChecks.decoderSeeds, check: WebSocketChecks.decoder),
        FuzzTarget(
            "websocket-handshake",
            "HTTP upgrade requests and responses, ws:// URLs and base64: parsed heads rebuild to the same request",
            seeds: WebSocketChecks.handshakeSeeds, check: WebSocketChecks.handshake),
        FuzzTarget(
            "strict-json", "the strict JSON parser: accepted text encodes and parses back to the same value",
            seeds: JSONChecks.jsonSeeds, check: JSONChecks.strictJSON),
        FuzzTarget(
            "control-client", "client messages as the server decodes them: decode, encode, decode is stable",
            seeds: JSONChecks.clientSeeds, check: JSONChecks.clientMessages),
        FuzzTarget(
            "control-server",
            "server messages as a client decodes them: stable round trip, the snapshot writer equals the tree, "
                + "and the client's cleaning leaves nothing a terminal would act on",
            seeds: JSONChecks.serverSeeds, check: JSONChecks.serverMessages),
        FuzzTarget(
            "directory",
            "the room directory's messages as a lobby reads them (lists, changes with and without since, errors) "
                + "and the lobby's request: stable round trip, numbers that find every gap, clean strings",
            seeds: DirectoryChecks.seeds, check: DirectoryChecks.directory),
        FuzzTarget(
            "media-signal", "the media messages (media, media_key, media_path, media_sources): stable round trip",
            seeds: JSONChecks.mediaSeeds, check: JSONChecks.mediaSignals),
        FuzzTarget(
            "token",
            "room tokens: base64url is canonical, claims round-trip, signed tokens verify and any changed byte is "
                + "refused", seeds: TokenChecks.seeds, check: TokenChecks.token),
        FuzzTarget(
            "rtp",
            "RTP headers, RFC 8285 one-byte extensions and the RFC 6464 level: ranges inside the packet, rebuilt "
                + "packets parse the same; receive statistics over hostile sequence numbers",
            seeds: MediaChecks.rtpSeeds, check: MediaChecks.rtp),
        FuzzTarget(
            "red",
            "RFC 2198 redundant-audio payloads: blocks inside the payload, encoded back to the same bytes, a "
                + "packet cut to its primary in place parses with exactly the primary", seeds: MediaChecks.redSeeds,
            check: MediaChecks.red),
        FuzzTarget(
            "rtcp", "RTCP compound packets: the reports re-encode to bytes that parse the same",
            seeds: MediaChecks.rtcpSeeds, check: MediaChecks.rtcp),
        FuzzTarget(
            "srtp",
            "SRTP and SRTCP unprotect on hostile bytes; protect then unprotect gives the packet back, a replay "
                + "and any changed byte are refused", seeds: MediaChecks.srtpSeeds, check: MediaChecks.srtp),
        FuzzTarget(
            "commands", "the / command grammar: padding is ignored, quoted names resolve to their peer",
            seeds: RoomChecks.commandSeeds, check: RoomChecks.commands),
        FuzzTarget(
            "roles", "the roles file: an accepted table written out again reads back the same",
            seeds: RoomChecks.roleSeeds, check: RoomChecks.roles),
        FuzzTarget(
            "recording-record",
            "a recording's record as replay reads it: in time order, and written out as the recorder writes it "
                + "reads back the same", seeds: RoomChecks.recordingRecordSeeds, check: RoomChecks.recordingRecord),
        FuzzTarget(
            "wav", "WAV files: decoded audio encodes to a file that decodes the same",
            seeds: WAVChecks.seeds, check: WAVChecks.wav),
        FuzzTarget(
            "display-width",
            "text on the screen: every cell's width is what a terminal advances for its characters, cut text "
                + "fits, cleaned names hold nothing a terminal would act on",
            seeds: WidthChecks.seeds, check: WidthChecks.displayWidth),
    ]

    /// The target called `name`.
    public static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}

/// Fails the check with `message` unless `condition` holds.
@inline(__always)
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    guard condition else { throw FuzzFailure(message()) }
}

/// An input read as the fuzzer's choices (a side, a split point, a limit) followed by the data itself. Choices
/// past the end of the input are zero, so every input is valid.
struct Choices {
    private var bytes: ArraySlice<UInt8>

    init(_ input: [UInt8]) {
        bytes = input[...]
    }

    mutating func byte() -> UInt8 {
        bytes.popFirst() ?? 0
    }

    mutating func uint16() -> UInt16 {
        UInt16(byte()) << 8 | UInt16(byte())
    }

    mutating func uint32() -> UInt32 {
        UInt32(uint16()) << 16 | UInt32(uint16())
    }

    /// One of `options`, chosen by the next byte.
    mutating func pick<T>(_ options: [T]) -> T {
        options[Int(byte()) % options.count]
    }

    /// Everything not taken yet.
    var rest: [UInt8] { Array(bytes) }
}
