import Foundation
import Glibc
import RoomTesting
import RoomTransport
import Testing

@testable import RoomServer

/// The host in the links the server mints for its own recorders: on a wildcard behind TLS, one the certificate
/// names and that reaches this machine, so that the recorder can check the certificate.
@Suite(.ownThread) struct OwnLinkHostTests {
    /// The host chosen for a server listening on `host` with a certificate naming `names` (subjectAltName), and
    /// what the log said meanwhile.
    func chosen(_ host: String, certificateNames names: String) throws -> (host: String, log: String) {
        let (certificate, key, folder) = try makeSelfSignedCertificate(names: names)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let log = ServerLog(minimum: .info, descriptor: ends[1])
        let tls = TLSServerConfiguration(certificateFile: certificate, privateKeyFile: key)
        let host = OwnLinkHost.choose(listening: host, tls: tls, log: log)
        close(ends[1])
        return (host, String(decoding: FileHandle(fileDescriptor: ends[0]).readDataToEndOfFile(), as: UTF8.self))
    }

    @Test func aCertificateIsReadForItsNamesAndAddresses() throws {
        let (certificate, key, folder) = try makeSelfSignedCertificate(
            names: "DNS:rooms.example.org,IP:192.0.2.7,DNS:*.example.org,IP:::1")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let named = TLSServerConfiguration(certificateFile: certificate, privateKeyFile: key).certificateNames()
        #expect(named?.names == ["rooms.example.org", "*.example.org"])
        #expect(named?.addresses == ["192.0.2.7", "::1"])
        #expect(TLSServerConfiguration(certificateFile: key, privateKeyFile: key).certificateNames() == nil)
    }

    @Test func aHostThatIsNotAWildcardIsKeptAndAWildcardWithoutTLSIsLoopback() {
        let log = ServerLog(minimum: .error)
        #expect(OwnLinkHost.choose(listening: "127.0.0.1", tls: nil, log: log) == "127.0.0.1")
        #expect(OwnLinkHost.choose(listening: "rooms.example.org", tls: nil, log: log) == "rooms.example.org")
        #expect(OwnLinkHost.choose(listening: "0.0.0.0", tls: nil, log: log) == "127.0.0.1")
        #expect(OwnLinkHost.choose(listening: "::", tls: nil, log: log) == "127.0.0.1")
    }

    @Test func onAWildcardBehindTLSTheHostIsOneTheCertificateNamesThatReachesThisMachine() throws {
        // A loopback address first, then a name that resolves to loopback.
        #expect(try chosen("0.0.0.0", certificateNames: "DNS:localhost,IP:127.0.0.1").host == "127.0.0.1")
        #expect(try chosen("0.0.0.0", certificateNames: "DNS:rooms.example.invalid,DNS:localhost").host == "localhost")
        // ::1 only when the server listens on ::.
        #expect(try chosen("::", certificateNames: "IP:::1").host == "::1")
        #expect(try chosen("0.0.0.0", certificateNames: "IP:::1,DNS:localhost").host == "localhost")
    }

    @Test func aCertificateNamingNoAddressOfThisMachineGivesItsFirstNameAndAWarning() throws {
        let (host, log) = try chosen("0.0.0.0", certificateNames: "DNS:*.example.invalid,DNS:rooms.example.invalid")
        #expect(host == "rooms.example.invalid")
        #expect(
            log.contains(
                "names no address of this machine: the server's own recorders will reach it as "
                    + "rooms.example.invalid"), "\(log)")
    }
}
