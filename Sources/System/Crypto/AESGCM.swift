import CCrypto

/// AES-256-GCM (NIST SP 800-38D) by OpenSSL's libcrypto: a 32-byte key, a 12-byte nonce, a 16-byte tag.
/// `seal` encrypts and authenticates the plaintext and the associated data together; `open` gives the plaintext
/// back only when both are exactly what was sealed under that key and nonce.
public enum AESGCM {
    public static let keyBytes = 32
    public static let nonceBytes = 12
    public static let tagBytes = 16

    /// The ciphertext followed by the tag; nil only if libcrypto reports a failure (or a size is wrong).
    public static func seal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8], associatedData: [UInt8]) -> [UInt8]? {
        guard let context = begin(key: key, nonce: nonce, associatedData: associatedData, encrypting: true) else {
            return nil
        }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: plaintext.count + tagBytes)
        let sealed = output.withUnsafeMutableBufferPointer { out -> Bool in
            var written: Int32 = 0
            if !plaintext.isEmpty {
                guard EVP_EncryptUpdate(context, out.baseAddress, &written, plaintext, Int32(plaintext.count)) == 1
                else { return false }
            }
            var final: Int32 = 0
            guard EVP_EncryptFinal_ex(context, out.baseAddress! + Int(written), &final) == 1 else { return false }
            return EVP_CIPHER_CTX_ctrl(
                context, EVP_CTRL_GCM_GET_TAG, Int32(tagBytes), out.baseAddress! + plaintext.count) == 1
        }
        return sealed ? output : nil
    }

    /// The plaintext of `sealed` (ciphertext then tag); nil when it does not authenticate under `key`, `nonce` and
    /// `associatedData`.
    public static func open(key: [UInt8], nonce: [UInt8], sealed: [UInt8], associatedData: [UInt8]) -> [UInt8]? {
        guard sealed.count >= tagBytes,
            let context = begin(key: key, nonce: nonce, associatedData: associatedData, encrypting: false)
        else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        let cipherLength = sealed.count - tagBytes
        var tag = Array(sealed[cipherLength...])
        var output = [UInt8](repeating: 0, count: max(cipherLength, 1))
        let opened = output.withUnsafeMutableBufferPointer { out -> Bool in
            var written: Int32 = 0
            if cipherLength > 0 {
                let ok = sealed.withUnsafeBufferPointer { input in
                    EVP_DecryptUpdate(context, out.baseAddress, &written, input.baseAddress, Int32(cipherLength))
                }
                guard ok == 1 else { return false }
            }
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagBytes), &tag) == 1 else { return false }
            var final: Int32 = 0
            return EVP_DecryptFinal_ex(context, out.baseAddress! + Int(written), &final) == 1
        }
        return opened ? Array(output.prefix(cipherLength)) : nil
    }

    /// A new context that encrypts or decrypts AES-256-GCM under `key` and `nonce`, `associatedData` already taken
    /// in; nil if a size is wrong or libcrypto reports a failure. The caller frees it.
    private static func begin(key: [UInt8], nonce: [UInt8], associatedData: [UInt8], encrypting: Bool) -> OpaquePointer?
    {
        guard key.count == keyBytes, nonce.count == nonceBytes, let context = EVP_CIPHER_CTX_new() else { return nil }
        var length: Int32 = 0
        guard EVP_CipherInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce, encrypting ? 1 : 0) == 1,
            associatedData.isEmpty
                || EVP_CipherUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1
        else {
            EVP_CIPHER_CTX_free(context)
            return nil
        }
        return context
    }
}
