import CCrypto

/// SHA-1 computed by OpenSSL's libcrypto; only for the WebSocket handshake (RFC 6455), never for security.
public enum SHA1 {
    /// The SHA-1 digest of `bytes` (20 bytes).
    public static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha1(), nil)
        }
        // EVP_Digest with SHA-1 fails only when the library itself is broken; that is not an input error.
        precondition(ok == 1, "libcrypto SHA-1 failed")
        return Array(digest.prefix(Int(length)))
    }
}
