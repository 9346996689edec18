import Synchronization

/// The forwarder's counters: every packet it receives ends in exactly one of them (or is forwarded).
/// Written by the forwarding thread, read by anyone.
public final class MediaCounters: Sendable {
    /// The counters by name, in the order `snapshot` lists them.
    public enum Name: String, CaseIterable, Sendable {
        /// RTP packets received from peers (UDP or WebSocket).
        case received = "rtp_received"
        /// RTP packets that passed every check and went out to the room.
        case forwardedPackets = "rtp_forwarded"
        /// Datagrams sent to listeners (a forwarded packet counts once per listener).
        case sentDatagrams = "datagrams_sent"
        /// Datagrams the kernel would not take.
        case sendDropped = "send_dropped"
        /// Not RTP: too short, wrong version, bad lengths; or a RED payload whose blocks do not fit.
        case malformed = "rtp_malformed"
        /// An SSRC the server did not assign to anyone in a room.
        case unknownSSRC = "unknown_ssrc"
        /// From a peer whose role may not publish, or who is muted.
        case notPermitted = "not_permitted"
        /// The packet did not authenticate under the peer's key.
        case authenticationFailed = "srtp_auth_failed"
        /// A replayed or too old packet.
        case replayed = "srtp_replayed"
        /// Any other SRTP failure.
        case srtpOther = "srtp_other"
        /// A malformed RFC 8285 extension or audio level.
        case badExtension = "bad_extension"
        /// RTCP packets that authenticated.
        case rtcpReceived = "rtcp_received"
        /// RTCP packets that did not authenticate or parse.
        case rtcpRejected = "rtcp_rejected"
        /// Media flows bound (or moved) to an address: the WebSocket at its first packet, a UDP address once it
        /// answered a consent check.
        case bindings = "bindings"
        /// Consent nonces sent to an address a peer's authenticated report came from, before media goes there.
        case consentChecks = "consent_checks"
        /// Reports from a new address that got no nonce: the peer had one less than a second before.
        case consentLimited = "consent_limited"
        /// Flows stopped because nothing authenticated came from their address for 30 s.
        case consentLapsed = "consent_lapsed"
        /// Packets received over the WebSocket fallback.
        case webSocketIn = "websocket_in"
        /// Packets sent over the WebSocket fallback.
        case webSocketOut = "websocket_out"
        /// Times the forwarding thread, busy fanning out, let a thread waiting for its CPU run.
        case yields = "cpu_yields"
    }

    // One atomic per counter: atomics cannot live in an array.
    private let receivedCount = Atomic<Int>(0)
    private let forwardedPacketsCount = Atomic<Int>(0)
    private let sentDatagramsCount = Atomic<Int>(0)
    private let sendDroppedCount = Atomic<Int>(0)
    private let malformedCount = Atomic<Int>(0)
    private let unknownSSRCCount = Atomic<Int>(0)
    private let notPermittedCount = Atomic<Int>(0)
    private let authenticationFailedCount = Atomic<Int>(0)
    private let replayedCount = Atomic<Int>(0)
    private let srtpOtherCount = Atomic<Int>(0)
    private let badExtensionCount = Atomic<Int>(0)
    private let rtcpReceivedCount = Atomic<Int>(0)
    private let rtcpRejectedCount = Atomic<Int>(0)
    private let bindingsCount = Atomic<Int>(0)
    private let consentChecksCount = Atomic<Int>(0)
    private let consentLimitedCount = Atomic<Int>(0)
    private let consentLapsedCount = Atomic<Int>(0)
    private let webSocketInCount = Atomic<Int>(0)
    private let webSocketOutCount = Atomic<Int>(0)
    private let yieldsCount = Atomic<Int>(0)

    public init() {}

    @inline(__always)
    func add(_ name: Name, _ amount: Int = 1) {
        switch name {
        case .received: receivedCount.add(amount, ordering: .relaxed)
        case .forwardedPackets: forwardedPacketsCount.add(amount, ordering: .relaxed)
        case .sentDatagrams: sentDatagramsCount.add(amount, ordering: .relaxed)
        case .sendDropped: sendDroppedCount.add(amount, ordering: .relaxed)
        case .malformed: malformedCount.add(amount, ordering: .relaxed)
        case .unknownSSRC: unknownSSRCCount.add(amount, ordering: .relaxed)
        case .notPermitted: notPermittedCount.add(amount, ordering: .relaxed)
        case .authenticationFailed: authenticationFailedCount.add(amount, ordering: .relaxed)
        case .replayed: replayedCount.add(amount, ordering: .relaxed)
        case .srtpOther: srtpOtherCount.add(amount, ordering: .relaxed)
        case .badExtension: badExtensionCount.add(amount, ordering: .relaxed)
        case .rtcpReceived: rtcpReceivedCount.add(amount, ordering: .relaxed)
        case .rtcpRejected: rtcpRejectedCount.add(amount, ordering: .relaxed)
        case .bindings: bindingsCount.add(amount, ordering: .relaxed)
        case .consentChecks: consentChecksCount.add(amount, ordering: .relaxed)
        case .consentLimited: consentLimitedCount.add(amount, ordering: .relaxed)
        case .consentLapsed: consentLapsedCount.add(amount, ordering: .relaxed)
        case .webSocketIn: webSocketInCount.add(amount, ordering: .relaxed)
        case .webSocketOut: webSocketOutCount.add(amount, ordering: .relaxed)
        case .yields: yieldsCount.add(amount, ordering: .relaxed)
        }
    }

    /// The current value of one counter.
    public func value(_ name: Name) -> Int {
        switch name {
        case .received: receivedCount.load(ordering: .relaxed)
        case .forwardedPackets: forwardedPacketsCount.load(ordering: .relaxed)
        case .sentDatagrams: sentDatagramsCount.load(ordering: .relaxed)
        case .sendDropped: sendDroppedCount.load(ordering: .relaxed)
        case .malformed: malformedCount.load(ordering: .relaxed)
        case .unknownSSRC: unknownSSRCCount.load(ordering: .relaxed)
        case .notPermitted: notPermittedCount.load(ordering: .relaxed)
        case .authenticationFailed: authenticationFailedCount.load(ordering: .relaxed)
        case .replayed: replayedCount.load(ordering: .relaxed)
        case .srtpOther: srtpOtherCount.load(ordering: .relaxed)
        case .badExtension: badExtensionCount.load(ordering: .relaxed)
        case .rtcpReceived: rtcpReceivedCount.load(ordering: .relaxed)
        case .rtcpRejected: rtcpRejectedCount.load(ordering: .relaxed)
        case .bindings: bindingsCount.load(ordering: .relaxed)
        case .consentChecks: consentChecksCount.load(ordering: .relaxed)
        case .consentLimited: consentLimitedCount.load(ordering: .relaxed)
        case .consentLapsed: consentLapsedCount.load(ordering: .relaxed)
        case .webSocketIn: webSocketInCount.load(ordering: .relaxed)
        case .webSocketOut: webSocketOutCount.load(ordering: .relaxed)
        case .yields: yieldsCount.load(ordering: .relaxed)
        }
    }

    /// Every counter with its wire name.
    public func snapshot() -> [(name: String, value: Int)] {
        Name.allCases.map { ($0.rawValue, value($0)) }
    }
}

/// Whether a peer may publish right now: its role has `publish_audio` and it is not muted.
///
/// The room authority sets it the moment a role or mute changes; the forwarder reads it for every packet, so a
/// demoted or muted speaker is cut off from the next packet on, with no queue in between.
public final class PublishGate: Sendable {
    private let allowed: Atomic<Bool>

    public init(_ allowed: Bool = false) {
        self.allowed = Atomic(allowed)
    }

    public var isOpen: Bool { allowed.load(ordering: .acquiring) }

    public func set(_ open: Bool) {
        allowed.store(open, ordering: .releasing)
    }
}
