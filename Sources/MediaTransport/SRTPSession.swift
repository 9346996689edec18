internal import CSRTP
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
        guard length >= 12, length + Self.maxTrailer <= buffer.count, let base = buffer.baseAddress else {
            throw .badLength(length)
        }
        var size = Int32(length)
        let status = srtp_protect(session, base, &size)
        guard status == srtp_err_status_ok else { throw .from(status, operation: "protect", length: length) }
        return Int(size)
    }

    /// Unprotects the SRTP packet of `length` bytes at the start of `buffer`, in place; returns the RTP length.
    public func unprotect(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        guard length >= 12, length <= buffer.count, let base = buffer.baseAddress else { throw .badLength(length) }
        var size = Int32(length)
        let status = srtp_unprotect(session, base, &size)
        guard status == srtp_err_status_ok else { throw .from(status, operation: "unprotect", length: length) }
        return Int(size)
    }

    /// Protects an RTCP packet in place; returns the SRTCP length.
    public func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        guard length >= 8, length + Self.maxTrailer <= buffer.count, let base = buffer.baseAddress else {
            throw .badLength(length)
        }
        var size = Int32(length)
        let status = srtp_protect_rtcp(session, base, &size)
        guard status == srtp_err_status_ok else { throw .from(status, operation: "protect RTCP", length: length) }
        return Int(size)
    }

    /// Unprotects an SRTCP packet in place; returns the RTCP length.
    public func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        guard length >= 8, length <= buffer.count, let base = buffer.baseAddress else { throw .badLength(length) }
        var size = Int32(length)
        let status = srtp_unprotect_rtcp(session, base, &size)
        guard status == srtp_err_status_ok else { throw .from(status, operation: "unprotect RTCP", length: length) }
        return Int(size)
    }

    /// Protects bytes held in an array (for tests and cold paths; allocates).
    public func protect(_ packet: [UInt8], rtcp: Bool = false) throws(SRTPError) -> [UInt8] {
        var buffer = packet + [UInt8](repeating: 0, count: Self.maxTrailer)
        let result: Result<Int, SRTPError> = buffer.withUnsafeMutableBytes { bytes in
            do throws(SRTPError) {
                return .success(
                    rtcp ? try protectRTCP(bytes, length: packet.count) : try protect(bytes, length: packet.count))
            } catch { return .failure(error) }
        }
        return Array(buffer[..<(try result.get())])
    }

    /// Unprotects bytes held in an array (for tests and cold paths; allocates).
    public func unprotect(_ packet: [UInt8], rtcp: Bool = false) throws(SRTPError) -> [UInt8] {
        var buffer = packet
        let result: Result<Int, SRTPError> = buffer.withUnsafeMutableBytes { bytes in
            do throws(SRTPError) {
                return .success(
                    rtcp ? try unprotectRTCP(bytes, length: packet.count) : try unprotect(bytes, length: packet.count))
            } catch { return .failure(error) }
        }
        return Array(buffer[..<(try result.get())])
    }
}

/// libsrtp must be initialised once per process before the first session.
enum SRTPLibrary {
    private static let initialized = Mutex(false)

    static func initializeOnce() {
        initialized.withLock { done in
            guard !done else { return }
            _ = srtp_init()
            done = true
        }
    }
}
