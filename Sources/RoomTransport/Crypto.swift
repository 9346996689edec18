import CCrypto

/// The two primitives the WebSocket handshake needs, from OpenSSL's libcrypto.
public enum TransportCrypto {
    /// The SHA-1 digest of `bytes` (20 bytes).
    public static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha1(), nil)
        }
        // EVP_Digest with SHA-1 fails only when the library itself is broken; that is not an input error.
        precondition(ok == 1, "libcrypto SHA-1 failed")
        return Array(digest.prefix(Int(length)))
    }

    /// `count` bytes from OpenSSL's cryptographically secure generator.
    public static func randomBytes(count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBytes { buffer in
            RAND_bytes(buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(buffer.count))
        }
        if ok != 1 {
            // RAND_bytes fails only without an entropy source; fall back to the system generator.
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = generator.next() }
        }
        return bytes
    }
}
