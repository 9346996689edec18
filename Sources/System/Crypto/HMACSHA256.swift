import CCrypto

/// HMAC-SHA256 (RFC 2104, FIPS 198-1) computed by OpenSSL's libcrypto.
public enum HMACSHA256 {
    /// Length of the tag in bytes.
    public static let tagBytes = 32

    /// The HMAC-SHA256 tag of `message` under `key`; `nil` only if libcrypto reports a failure.
    public static func sign(key: [UInt8], message: [UInt8]) -> [UInt8]? {
        var tag = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var tagLength: UInt32 = 0
        // An empty Swift array may have no storage; libcrypto wants a real pointer even for a zero-length key.
        let keyStorage = key.isEmpty ? [0] : key
        let messageStorage = message.isEmpty ? [0] : message
        let result = keyStorage.withUnsafeBufferPointer { keyBuffer in
            messageStorage.withUnsafeBufferPointer { messageBuffer in
                tag.withUnsafeMutableBufferPointer { tagBuffer in
                    HMAC(
                        EVP_sha256(), keyBuffer.baseAddress, Int32(key.count), messageBuffer.baseAddress,
                        message.count, tagBuffer.baseAddress, &tagLength)
                }
            }
        }
        guard result != nil, Int(tagLength) == tagBytes else {
            return nil
        }
        return Array(tag.prefix(tagBytes))
    }
}
