import CCrypto
import CEventPoll
import Glibc

/// The server's certificate and key for `wss://`, as PEM files.
public struct TLSServerConfiguration: Sendable, Equatable {
    /// The certificate chain (leaf first), PEM.
    public var certificateFile: String
    /// The private key, PEM, unencrypted.
    public var privateKeyFile: String

    public init(certificateFile: String, privateKeyFile: String) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
    }
}

extension TLSServerConfiguration {
    /// The names the certificate is valid for (its subjectAltName): DNS names as written (`*.example.org` too) and
    /// IP addresses as text; nil when the file holds no certificate.
    public func certificateNames() -> (names: [String], addresses: [String])? {
        var buffer = [CChar](repeating: 0, count: 16_384)
        let used = clubroom_certificate_names(certificateFile, &buffer, Int32(buffer.count))
        guard used >= 0 else { return nil }
        var names: [String] = []
        var addresses: [String] = []
        let entries = buffer.prefix(Int(used)).split(separator: 0, omittingEmptySubsequences: true)
        for entry in entries {
            let text = String(decoding: entry.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("D:") { names.append(String(text.dropFirst(2))) }
            if text.hasPrefix("I:") { addresses.append(String(text.dropFirst(2))) }
        }
        return (names, addresses)
    }
}

/// How a client checks a `wss://` server.
public struct TLSClientConfiguration: Sendable, Equatable {
    /// Trusted CA certificates (PEM); nil uses the system's trust store.
    public var caFile: String?
    /// Whether to check the certificate chain and host name; off only for explicit testing against
    /// self-signed servers without their certificate at hand.
    public var verifiesPeer: Bool

    public init(caFile: String? = nil, verifiesPeer: Bool = true) {
        self.caFile = caFile
        self.verifiesPeer = verifiesPeer
    }
}

/// The oldest error in OpenSSL's queue for this thread, as text, and the queue cleared.
func openSSLErrorText(_ fallback: String) -> String {
    let code = ERR_get_error()
    ERR_clear_error()
    guard code != 0 else { return fallback }
    var text = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(code, &text, text.count)
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// An `SSL_CTX` owned by Swift; never leaves this target.
final class TLSContext: @unchecked Sendable {
    // Safe to share: OpenSSL's SSL_CTX is safe for concurrent SSL_new once configured, and we never change it
    // after init.
    let context: OpaquePointer
    let verifiesPeer: Bool

    private init(context: OpaquePointer, verifiesPeer: Bool) {
        self.context = context
        self.verifiesPeer = verifiesPeer
    }

    deinit { SSL_CTX_free(context) }

    static func server(_ configuration: TLSServerConfiguration) throws(TransportError) -> TLSContext {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw TransportError(place: "TLS context", problem: openSSLErrorText("SSL_CTX_new failed"))
        }
        let tls = TLSContext(context: context, verifiesPeer: false)
        configureCommon(context)
        // TLS 1.2 with forward secrecy and an AEAD cipher only (no static-RSA key exchange, no CBC), in the
        // server's order of preference; TLS 1.3's suites are all of that kind already.
        guard SSL_CTX_set_cipher_list(context, Self.serverCiphers) == 1 else {
            throw TransportError(place: "TLS ciphers", problem: openSSLErrorText("refused"))
        }
        _ = clubroom_ssl_ctx_prefer_server_ciphers(context)
        guard SSL_CTX_use_certificate_chain_file(context, configuration.certificateFile) == 1 else {
            throw TransportError(
                place: "TLS certificate \(configuration.certificateFile)", problem: openSSLErrorText("unreadable"))
        }
        guard SSL_CTX_use_PrivateKey_file(context, configuration.privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
            throw TransportError(
                place: "TLS key \(configuration.privateKeyFile)", problem: openSSLErrorText("unreadable"))
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw TransportError(
                place: "TLS key \(configuration.privateKeyFile)",
                problem: openSSLErrorText("does not match the certificate"))
        }
        return tls
    }

    /// The TLS 1.2 cipher suites a server offers, best first.
    static let serverCiphers = "ECDHE+AESGCM:ECDHE+CHACHA20"

    static func client(_ configuration: TLSClientConfiguration) throws(TransportError) -> TLSContext {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw TransportError(place: "TLS context", problem: openSSLErrorText("SSL_CTX_new failed"))
        }
        let tls = TLSContext(context: context, verifiesPeer: configuration.verifiesPeer)
        configureCommon(context)
        if configuration.verifiesPeer {
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            if let caFile = configuration.caFile {
                guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                    throw TransportError(place: "TLS CA file \(caFile)", problem: openSSLErrorText("unreadable"))
                }
            } else if SSL_CTX_set_default_verify_paths(context) != 1 {
                throw TransportError(place: "TLS trust store", problem: openSSLErrorText("cannot load"))
            }
        } else {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        }
        return tls
    }

    private static func configureCommon(_ context: OpaquePointer) {
        _ = clubroom_ssl_ctx_set_min_proto_tls12(context)
        // Writes may be partial and may resume from a moved buffer: our write buffer compacts between calls.
        _ = clubroom_ssl_ctx_set_mode(
            context, Int(SSL_MODE_ENABLE_PARTIAL_WRITE) | Int(SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER))
    }
}

/// TLS over a non-blocking socket, driven by the event loop.
final class TLSStream: ByteStream {
    private let ssl: OpaquePointer
    private let descriptor: Int32
    private let context: TLSContext
    private var closed = false

    /// A server-side stream (`host` nil) or a client one checking `host` (a DNS name or an IP address).
    init(context: TLSContext, descriptor: Int32, clientHost host: String?) throws(TransportError) {
        ERR_clear_error()
        guard let ssl = SSL_new(context.context) else {
            throw TransportError(place: "TLS session", problem: openSSLErrorText("SSL_new failed"))
        }
        self.ssl = ssl
        self.descriptor = descriptor
        self.context = context
        SSL_set_fd(ssl, descriptor)
        if let host {
            SSL_set_connect_state(ssl)
            let isAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
            if !isAddress { _ = clubroom_ssl_set_tlsext_host_name(ssl, host) }
            if context.verifiesPeer {
                let ok =
                    isAddress
                    ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) : SSL_set1_host(ssl, host)
                guard ok == 1 else {
                    throw TransportError(place: "TLS host \(host)", problem: openSSLErrorText("cannot check this name"))
                }
            }
        } else {
            SSL_set_accept_state(ssl)
        }
    }

    deinit { SSL_free(ssl) }

    private func step(_ result: Int32, _ what: String) -> StreamStep {
        if result > 0 { return .bytes(Int(result)) }
        let error = SSL_get_error(ssl, result)
        switch error {
        case SSL_ERROR_WANT_READ: return .wouldBlock(wantsWrite: false)
        case SSL_ERROR_WANT_WRITE: return .wouldBlock(wantsWrite: true)
        case SSL_ERROR_ZERO_RETURN: return .endOfStream
        case SSL_ERROR_SYSCALL:
            let code = errno
            ERR_clear_error()
            return code == 0 ? .endOfStream : .failed("\(what): \(String(cString: strerror(code)))")
        default:
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                ERR_clear_error()
                failureCause = .untrustedCertificate
                return .failed("\(what): certificate: \(String(cString: X509_verify_cert_error_string(verify)))")
            }
            failureCause = Self.cause(ofReason: ERR_GET_REASON(ERR_peek_error()))
            return .failed("\(what): \(openSSLErrorText("TLS error \(error)"))")
        }
    }

    /// Why the last step that failed failed.
    private(set) var failureCause: TransportError.Cause = .other

    /// The reasons OpenSSL gives when what answered a TLS hello is not TLS: a plain HTTP answer read as a record
    /// header (a wrong version, a record too long, the record layer failing, as OpenSSL 3.2 says it) or a peer that
    /// closed without a word.
    static func cause(ofReason reason: Int32) -> TransportError.Cause {
        switch reason {
        case SSL_R_WRONG_VERSION_NUMBER, SSL_R_PACKET_LENGTH_TOO_LONG, SSL_R_UNEXPECTED_EOF_WHILE_READING,
            recordLayerFailure:
            .notTLS
        default: .other
        }
    }

    /// `SSL_R_RECORD_LAYER_FAILURE`, which OpenSSL before 3.2 does not define.
    static let recordLayerFailure: Int32 = 313

    func handshake() -> StreamStep {
        ERR_clear_error()
        return step(SSL_do_handshake(ssl), "TLS handshake")
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamStep {
        ERR_clear_error()
        return step(SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max)))), "TLS read")
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> StreamStep {
        guard bytes.count > 0 else { return .bytes(0) }
        ERR_clear_error()
        return step(SSL_write(ssl, bytes.baseAddress, Int32(min(bytes.count, Int(Int32.max)))), "TLS write")
    }

    func shutdownWrite() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
        Socket.shutdownWrite(descriptor)
    }

    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(descriptor)
    }
}
