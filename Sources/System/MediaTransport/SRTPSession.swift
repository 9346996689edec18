internal import CSRTP
internal import CSRTPCrypto
import Synchronization

/// An SRTP master key and salt for AES_CM_128_HMAC_SHA1_80 (RFC 3711): 30 bytes.
public struct SRTPKey: Sendable, Equatable, CustomStringConvertible {
    /// Master key (16 bytes) followed by master salt (14 bytes).
    public static let length = 30
    public let bytes: [UInt8]

    /// A key from exactly 30 bytes, or `nil`.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.length else { return nil }
        self.bytes = bytes
    }

    /// Never prints the key itself.
    public var description: String { "SRTPKey(30 bytes)" }
}

/// Why an SRTP operation failed; every failure is counted by its kind.
public enum SRTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The packet did not authenticate under this key: forged, corrupted, or for another key.
    case authenticationFailed
    /// The packet was seen before, or is older than the replay window.
    case replayed
    /// The packet is too short to be SRTP, or the buffer has no room for the trailer.
    case badLength(Int)
    /// libsrtp failed otherwise (its status code), naming the operation.
    case library(operation: String, status: Int32)

    public var description: String {
        switch self {
        case .authenticationFailed: "SRTP: the packet does not authenticate"
        case .replayed: "SRTP: a replayed or too old packet"
        case .badLength(let length): "SRTP: a packet of \(length) bytes does not fit"
        case .library(let operation, let status): "SRTP: \(operation) failed with libsrtp status \(status)"
        }
    }

    /// A short name for counters.
    public var counterName: String {
        switch self {
        case .authenticationFailed: "srtp_auth"
        case .replayed: "srtp_replay"
        case .badLength: "srtp_length"
        case .library: "srtp_other"
        }
    }

    static func from(_ status: srtp_err_status_t, operation: String, length: Int) -> SRTPError {
        switch status {
        case srtp_err_status_auth_fail: .authenticationFailed
        case srtp_err_status_replay_fail, srtp_err_status_replay_old: .replayed
        case srtp_err_status_bad_param, srtp_err_status_parse_err: .badLength(length)
        default: .library(operation: operation, status: Int32(status.rawValue))
        }
    }
}

/// One libsrtp session: protects (outbound) or unprotects (inbound) RTP and RTCP in place, with libsrtp's
/// replay window per SSRC.
///
/// Not thread-safe by itself (libsrtp sessions are not): one owner thread uses it. It is `Sendable` so it can
/// be handed to that thread; the handle is only touched through the methods, by one thread at a time.
public final class SRTPSession: @unchecked Sendable {
    /// The most bytes protecting adds to an RTP or RTCP packet; buffers need this much room after the packet.
    public static let maxTrailer = Int(clubroom_srtp_max_trailer())
    /// Packets kept in the replay window per SSRC.
    public static let replayWindow = 1024

    public enum Direction: Sendable {
        /// Protects packets we send.
        case outbound
        /// Unprotects packets we receive.
        case inbound
    }

    private let session: srtp_t
    public let direction: Direction

    /// A session for one SSRC, or for any SSRC of its direction when `ssrc` is `nil` (each SSRC still gets its
    /// own stream: its own rollover counter and replay window).
    public init(key: SRTPKey, direction: Direction, ssrc: UInt32? = nil) throws(SRTPError) {
        SRTPLibrary.initializeOnce()
        var created: srtp_t?
        let status = key.bytes.withUnsafeBufferPointer { keyBytes in
            clubroom_srtp_create(
                &created, keyBytes.baseAddress, direction == .outbound ? 1 : 0, ssrc ?? 0, UInt(Self.replayWindow))
        }
        guard status == srtp_err_status_ok, let created else {
            throw .library(operation: "create a session", status: Int32(status.rawValue))
        }
        session = created
        self.direction = direction
    }

    deinit {
        srtp_dealloc(session)
    }

    /// Protects the RTP packet of `length` bytes at the start of `buffer`, in place; returns the new length.
    /// The buffer needs `maxTrailer` bytes of room after the packet.
    public func protect(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try transform(.protect, buffer, length: length)
    }

    /// Unprotects the SRTP packet of `length` bytes at the start of `buffer`, in place; returns the RTP length.
    public func unprotect(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try transform(.unprotect, buffer, length: length)
    }

    /// Protects an RTCP packet in place; returns the SRTCP length.
    public func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try transform(.protectRTCP, buffer, length: length)
    }

    /// Unprotects an SRTCP packet in place; returns the RTCP length.
    public func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try transform(.unprotectRTCP, buffer, length: length)
    }

    /// Protects bytes held in an array (for tests and cold paths; allocates).
    public func protect(_ packet: [UInt8], rtcp: Bool = false) throws(SRTPError) -> [UInt8] {
        try transform(rtcp ? .protectRTCP : .protect, packet)
    }

    /// Unprotects bytes held in an array (for tests and cold paths; allocates).
    public func unprotect(_ packet: [UInt8], rtcp: Bool = false) throws(SRTPError) -> [UInt8] {
        try transform(rtcp ? .unprotectRTCP : .unprotect, packet)
    }

    /// The four things a session does to a packet, each with the shortest packet it takes and whether the
    /// result grows by a trailer.
    private enum Operation {
        case protect, unprotect, protectRTCP, unprotectRTCP

        /// An RTP header is 12 bytes, an RTCP header 8.
        var minimumLength: Int {
            switch self {
            case .protect, .unprotect: 12
            case .protectRTCP, .unprotectRTCP: 8
            }
        }

        var grows: Bool {
            switch self {
            case .protect, .protectRTCP: true
            case .unprotect, .unprotectRTCP: false
            }
        }

        /// How libsrtp's failures name it.
        var name: String {
            switch self {
            case .protect: "protect"
            case .unprotect: "unprotect"
            case .protectRTCP: "protect RTCP"
            case .unprotectRTCP: "unprotect RTCP"
            }
        }
    }

    /// Checks the length and the room in the buffer, then runs libsrtp in place. On the media path: no
    /// allocation, one call into libsrtp.
    @inline(__always)
    private func transform(
        _ operation: Operation, _ buffer: UnsafeMutableRawBufferPointer, length: Int
    ) throws(SRTPError) -> Int {
        let room = operation.grows ? length + Self.maxTrailer : length
        guard length >= operation.minimumLength, room <= buffer.count, let base = buffer.baseAddress else {
            throw .badLength(length)
        }
        var size = Int32(length)
        let status =
            switch operation {
            case .protect: srtp_protect(session, base, &size)
            case .unprotect: srtp_unprotect(session, base, &size)
            case .protectRTCP: srtp_protect_rtcp(session, base, &size)
            case .unprotectRTCP: srtp_unprotect_rtcp(session, base, &size)
            }
        guard status == srtp_err_status_ok else { throw .from(status, operation: operation.name, length: length) }
        return Int(size)
    }

    /// The array form: copies the packet into a buffer with room for a trailer when the operation adds one.
    private func transform(_ operation: Operation, _ packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        var buffer = packet + [UInt8](repeating: 0, count: operation.grows ? Self.maxTrailer : 0)
        let result: Result<Int, SRTPError> = buffer.withUnsafeMutableBytes { bytes in
            do throws(SRTPError) {
                return .success(try transform(operation, bytes, length: packet.count))
            } catch { return .failure(error) }
        }
        return Array(buffer[..<(try result.get())])
    }
}

/// Which implementation of AES-CM-128 and HMAC-SHA1 libsrtp runs under every session of this process.
public enum SRTPCryptography: String, Sendable, Equatable {
    /// OpenSSL's libcrypto, each stream's contexts keyed once (the normal case).
    case libcrypto
    /// libsrtp's own, as Debian built it (on NSS): used only if libsrtp refused the libcrypto ones, which must
    /// pass its known-answer tests first.
    case libsrtp
}

/// libsrtp must be initialised once per process before the first session; it is then given libcrypto's cipher
/// and authentication (docs/media.md, "SRTP").
public enum SRTPLibrary {
    private static let state = Mutex<SRTPCryptography?>(nil)

    static func initializeOnce() {
        _ = cryptography
    }

    /// What libsrtp encrypts and authenticates with; initialises libsrtp on first use.
    public static var cryptography: SRTPCryptography {
        state.withLock { chosen in
            if let chosen { return chosen }
            _ = srtp_init()
            let result: SRTPCryptography = clubroom_srtp_use_libcrypto() == 0 ? .libcrypto : .libsrtp
            chosen = result
            return result
        }
    }

    /// Runs libsrtp's own known-answer tests for AES-CM-128 and HMAC-SHA1 on the libcrypto implementations;
    /// `nil` when both pass, else libsrtp's status code.
    public static func libcryptoSelfTest() -> Int32? {
        initializeOnce()
        let status = clubroom_srtp_self_test()
        return status == 0 ? nil : status
    }
}
