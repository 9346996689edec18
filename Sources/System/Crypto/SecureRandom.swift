import CCrypto

/// The random generator failed; libcrypto's error text is included.
public struct SecureRandomError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What libcrypto said.
    public var reason: String
    public var description: String { "could not get random bytes from OpenSSL: \(reason)" }
}

/// Cryptographically secure random bytes from OpenSSL's `RAND_bytes`.
public enum SecureRandom {
    /// Returns `count` random bytes suitable for keys and secrets.
    public static func bytes(_ count: Int) throws(SecureRandomError) -> [UInt8] {
        precondition(count >= 0, "a byte count is never negative")
        if count == 0 {
            return []
        }
        var output = [UInt8](repeating: 0, count: count)
        let status = output.withUnsafeMutableBufferPointer { buffer in
            RAND_bytes(buffer.baseAddress, Int32(count))
        }
        guard status == 1 else {
            throw SecureRandomError(reason: OpenSSLError.lastMessage())
        }
        return output
    }
}

/// Reads libcrypto's thread-local error queue.
enum OpenSSLError {
    static func lastMessage() -> String {
        let code = ERR_get_error()
        if code == 0 {
            return "no error reported"
        }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
