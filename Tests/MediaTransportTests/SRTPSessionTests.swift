import Glibc
import MediaTransport
import MediaWire
import RoomTesting
import Testing

let keyA = SRTPKey(bytes: (0..<30).map { UInt8($0) })!
let keyB = SRTPKey(bytes: (0..<30).map { UInt8(100 + $0) })!

func rtp(ssrc: UInt32 = 0x1111_2222, sequence: UInt16, payload: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]) -> [UInt8] {
    RTPHeader(payloadType: 111, sequenceNumber: sequence, timestamp: UInt32(sequence) * 960, ssrc: ssrc)
        .packet(extensionElements: [.audioLevel(RTPAudioLevel(level: 30, voice: true))], payload: payload)
}

@Suite(.ownThread) struct SRTPSessionTests {
    @Test func protectAndUnprotectRoundTripWithTheHeaderInTheClear() throws {
        let sender = try SRTPSession(key: keyA, direction: .outbound)
        let receiver = try SRTPSession(key: keyA, direction: .inbound)
        let packet = rtp(sequence: 1)
        let protected = try sender.protect(packet)
        #expect(protected.count == packet.count + 10)
        #expect(Array(protected[..<20]) == Array(packet[..<20]))
        #expect(Array(protected[20..<28]) != Array(packet[20...]))
        // The audio level stays readable to the server without decrypting.
        let header = try RTPHeader.parse(protected)
        #expect(try RTPOneByteExtension.audioLevel(in: protected, header: header)?.level == 30)
        #expect(try receiver.unprotect(protected) == packet)
    }

    @Test func replaysAreRefused() throws {
        let sender = try SRTPSession(key: keyA, direction: .outbound)
        let receiver = try SRTPSession(key: keyA, direction: .inbound)
        let protected = try sender.protect(rtp(sequence: 5))
        _ = try receiver.unprotect(protected)
        #expect(throws: SRTPError.replayed) { try receiver.unprotect(protected) }
    }

    @Test func theWrongKeyFailsAuthentication() throws {
        let sender = try SRTPSession(key: keyA, direction: .outbound)
        let receiver = try SRTPSession(key: keyB, direction: .inbound)
        #expect(throws: SRTPError.authenticationFailed) { try receiver.unprotect(try sender.protect(rtp(sequence: 1))) }
    }

    @Test func everyChangedByteIsRefusedWithATypedError() throws {
        let sender = try SRTPSession(key: keyA, direction: .outbound)
        let protected = try sender.protect(rtp(sequence: 9))
        for index in protected.indices {
            var changed = protected
            changed[index] ^= 0x5A
            let receiver = try SRTPSession(key: keyA, direction: .inbound)
            #expect(throws: SRTPError.self, "byte \(index)") { try receiver.unprotect(changed) }
        }
        for length in 0..<protected.count {
            let receiver = try SRTPSession(key: keyA, direction: .inbound)
            #expect(throws: SRTPError.self, "cut at \(length)") { try receiver.unprotect(Array(protected[..<length])) }
        }
    }

    @Test func aSessionForOneSSRCRefusesOthers() throws {
        let sender = try SRTPSession(key: keyA, direction: .outbound)
        let receiver = try SRTPSession(key: keyA, direction: .inbound, ssrc: 7)
        #expect(throws: SRTPError.self) { try receiver.unprotect(try sender.protect(rtp(ssrc: 8, sequence: 1))) }
        _ = try receiver.unprotect(try sender.protect(rtp(ssrc: 7, sequence: 1)))
    }

    /// The forwarding design: one protect per packet under the room key, the same bytes to every listener,
    /// each SSRC with its own sequence space.
    @Test func oneProtectedPacketDecryptsAtEveryListener() throws {
        let room = try SRTPSession(key: keyA, direction: .outbound)
        let listeners = try (0..<3).map { _ in try SRTPSession(key: keyA, direction: .inbound) }
        for sequence in UInt16(1)...5 {
            for ssrc in [UInt32(10), 20] {
                let packet = rtp(ssrc: ssrc, sequence: sequence)
                let protected = try room.protect(packet)
                for listener in listeners { #expect(try listener.unprotect(protected) == packet) }
            }
        }
    }

    @Test func rtcpRoundTripsAndReplaysAreRefused() throws {
        let sender = try SRTPSession(key: keyA, direction: .outbound)
        let receiver = try SRTPSession(key: keyA, direction: .inbound)
        let report = RTCPPacket.receiverReport(ssrc: 0x1111_2222, reports: []).bytes()
        let protected = try sender.protect(report, rtcp: true)
        #expect(protected.count > report.count)
        #expect(try receiver.unprotect(protected, rtcp: true) == report)
        #expect(throws: SRTPError.replayed) { try receiver.unprotect(protected, rtcp: true) }
    }

    @Test func keysHaveExactlyThirtyBytesAndNeverPrint() {
        #expect(SRTPKey(bytes: [1, 2, 3]) == nil)
        #expect("\(keyA)" == "SRTPKey(30 bytes)")
    }
}

/// libsrtp runs on libcrypto's AES-CM and HMAC-SHA1 (Debian's libsrtp2 is built on NSS). The packets must be
/// exactly what libsrtp's own implementation makes: the expected bytes below were made by libsrtp 2.5 on NSS, with
/// the same key, for a first packet, for a packet after the sequence number wrapped (rollover counter 1, which
/// goes into both the counter and the tag), and for a second SRTCP packet (index 1).
@Suite(.ownThread) struct SRTPCryptographyTests {
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    static func packet(sequence: String) -> [UInt8] {
        bytes("806f" + sequence + "000003c011112222" + "0102030405060708")
    }

    @Test func libsrtpRunsOnLibcryptoWhoseTypesPassLibsrtpsKnownAnswers() {
        #expect(SRTPLibrary.cryptography == .libcrypto)
        #expect(SRTPLibrary.libcryptoSelfTest() == nil)
    }

    @Test func packetsAreByteForByteWhatLibsrtpsOwnImplementationMakes() throws {
        let sender = try SRTPSession(key: keyA, direction: .outbound)
        #expect(
            try sender.protect(Self.packet(sequence: "0001"))
                == Self.bytes("806f0001000003c011112222b9af8b8364ad21400c69ff01e0605baff6cd"))
        _ = try sender.protect(Self.packet(sequence: "ffff"))
        #expect(
            try sender.protect(Self.packet(sequence: "0000"))
                == Self.bytes("806f0000000003c011112222bf50789cd2de73506328ff1c308d1c3c2ae4"))
        let report = Self.bytes("80c8000611112222") + (8..<28).map { UInt8(0xA0 + $0) }
        _ = try sender.protect(report, rtcp: true)
        #expect(
            try sender.protect(report, rtcp: true)
                == Self.bytes(
                    "80c8000611112222a0352cf3c5926852ad58392ee102913eccd20dda800000021c953572b88e5bb160a5"))
    }

    /// A packet of 1,203 payload bytes: AES-CM's keystream in several calls into libcrypto (32 blocks each) and a
    /// last, partial block. The tag is over the whole encrypted packet, so its last 40 bytes (30 of ciphertext and
    /// the tag) settle every byte; they were made by an SRTP written from RFC 3711 on Python's `cryptography`
    /// (AES-CTR, HMAC-SHA1), which makes the bytes above too.
    @Test func aLongPacketIsByteForByteWhatRFC3711Makes() throws {
        let sender = try SRTPSession(key: keyA, direction: .outbound)
        let packet = Self.bytes("806f00020000078011112222") + (0..<1203).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let protected = try sender.protect(packet)
        #expect(protected.count == 1225)
        #expect(
            Array(protected.suffix(40))
                == Self.bytes("f24961661ffb78644b350522767dd0d8dad37a9cb54ad007ac44e7a44f1b68db93b03641389dc35d"))
        let receiver = try SRTPSession(key: keyA, direction: .inbound)
        #expect(try receiver.unprotect(protected) == packet)
    }

    @Test func aWrappedSequenceStillDecryptsAndAForgedTagStillFails() throws {
        let sender = try SRTPSession(key: keyA, direction: .outbound)
        let receiver = try SRTPSession(key: keyA, direction: .inbound)
        for sequence in ["fffe", "ffff", "0000", "0001"] {
            let packet = Self.packet(sequence: sequence)
            let protected = try sender.protect(packet)
            var forged = protected
            forged[forged.count - 1] ^= 1
            #expect(throws: SRTPError.authenticationFailed, "sequence \(sequence)") { try receiver.unprotect(forged) }
            #expect(try receiver.unprotect(protected) == packet, "sequence \(sequence)")
        }
    }
}

@Suite(.ownThread) struct UDPSocketTests {
    @Test func batchesGoOutAndComeBack() throws {
        let sender = try UDPSocket(binding: .loopback(port: 0))
        let receivers = try (0..<3).map { _ in try UDPSocket(binding: .loopback(port: 0)) }
        let batch = SendBatch(capacity: 4)
        let payloads: [[UInt8]] = (0..<6).map { [UInt8($0), 0xAB] }
        for (index, payload) in payloads.enumerated() {
            payload.withUnsafeBytes { bytes in
                // Five sends fill the batch of four once, so one flush happens inside `append`.
                batch.append(bytes, to: receivers[index % 3].localAddress, on: sender)
                if index == 4 { batch.flush(on: sender) }
            }
        }
        batch.flush(on: sender)
        #expect(batch.dropped == 0)
        let receive = ReceiveBatch(capacity: 8)
        for (index, receiver) in receivers.enumerated() {
            #expect(receiver.waitReadable(timeoutMilliseconds: 2000))
            var got: [[UInt8]] = []
            while got.count < 2 {
                _ = receiver.waitReadable(timeoutMilliseconds: 2000)
                let count = receive.receive(from: receiver)
                for slot in 0..<count {
                    got.append(Array(receive.slot(slot)[..<receive.length(slot)]))
                    #expect(receive.sender(slot) == sender.localAddress)
                }
            }
            #expect(got == [payloads[index], payloads[index + 3]])
        }
    }

    /// The kernel turns arrival stamps on for the machine once a socket asks, but may do so a moment later (when
    /// no other socket had them on); a datagram that arrives before then is stamped when it is read. Waits (2 s
    /// at most) until a datagram left 5 ms in the queue says it waited, and leaves the queue empty.
    static func waitForStamps(_ receiver: UDPSocket, from sender: UDPSocket) -> Bool {
        let batch = ReceiveBatch(capacity: 1, slotSize: 64)
        for _ in 0..<200 {
            guard sender.send([0], to: receiver.localAddress), receiver.waitReadable(timeoutMilliseconds: 1000) else {
                return false
            }
            usleep(5000)
            guard batch.receiveStamped(from: receiver) == 1 else { return false }
            if batch.ageMicroseconds(0) >= 4000 { return batch.receiveStamped(from: receiver) == 0 }
        }
        return false
    }

    @Test func aStampedDatagramSaysHowLongItWaited() throws {
        let sender = try UDPSocket(binding: .loopback(port: 0))
        let receiver = try UDPSocket(binding: .loopback(port: 0))
        #expect(receiver.stampArrivals())
        let batch = ReceiveBatch(capacity: 1, slotSize: 64)
        #expect(Self.waitForStamps(receiver, from: sender))
        #expect(batch.receiveStamped(from: receiver) == 0)
        #expect(sender.send([1, 2, 3], to: receiver.localAddress))
        #expect(receiver.waitReadable(timeoutMilliseconds: 2000))
        // It waits at least this long in the queue; the stamp was taken when it arrived, before the sleep.
        usleep(30_000)
        try #require(batch.receiveStamped(from: receiver) == 1)
        #expect(Array(batch.slot(0)[..<batch.length(0)]) == [1, 2, 3])
        #expect(batch.ageMicroseconds(0) >= 30_000)
        #expect(batch.receiveStamped(from: receiver) == 0)
    }

    @Test func aStampedBatchReadsEverythingQueuedInOneCallWithEachDatagramsWait() throws {
        let sender = try UDPSocket(binding: .loopback(port: 0))
        let receiver = try UDPSocket(binding: .loopback(port: 0))
        #expect(receiver.stampArrivals())
        #expect(Self.waitForStamps(receiver, from: sender))
        let batch = ReceiveBatch(capacity: 4, slotSize: 64)
        #expect(batch.receiveStamped(from: receiver) == 0)
        #expect(sender.send([1], to: receiver.localAddress))
        // The first waits at least 60 ms in the queue, the last two at least 30 ms.
        usleep(30_000)
        #expect(sender.send([2, 2], to: receiver.localAddress))
        #expect(sender.send([3, 3, 3], to: receiver.localAddress))
        #expect(receiver.waitReadable(timeoutMilliseconds: 2000))
        usleep(30_000)
        #expect(batch.receiveStamped(from: receiver) == 3)
        #expect((0..<3).map { Array(batch.slot($0)[..<batch.length($0)]) } == [[1], [2, 2], [3, 3, 3]])
        #expect((0..<3).allSatisfy { batch.sender($0) == sender.localAddress })
        #expect(batch.ageMicroseconds(0) >= 60_000)
        #expect(batch.ageMicroseconds(1) >= 30_000 && batch.ageMicroseconds(1) < batch.ageMicroseconds(0))
        #expect(batch.ageMicroseconds(2) >= 30_000 && batch.ageMicroseconds(2) <= batch.ageMicroseconds(1))
        #expect(batch.receiveStamped(from: receiver) == 0)
        // More than the batch holds: what is left waits for the next call.
        for byte in 0..<6 { #expect(sender.send([UInt8(byte)], to: receiver.localAddress)) }
        #expect(receiver.waitReadable(timeoutMilliseconds: 2000))
        usleep(20_000)
        #expect(batch.receiveStamped(from: receiver) == 4)
        #expect(batch.receiveStamped(from: receiver) == 2)
        #expect(batch.slot(1)[0] == 5)
    }

    @Test func aDestinationTheKernelRefusesIsCountedAndTheRestStillGoOutInOrder() throws {
        let sender = try UDPSocket(binding: .loopback(port: 0))
        let receiver = try UDPSocket(binding: .loopback(port: 0))
        let batch = SendBatch(capacity: 8)
        let payloads: [[UInt8]] = (0..<5).map { [UInt8($0)] }
        for (index, payload) in payloads.enumerated() {
            payload.withUnsafeBytes { bytes in
                // Port 0 is no destination: sendmmsg stops there with EINVAL, and the batch skips it.
                batch.append(bytes, to: index == 2 ? .loopback(port: 0) : receiver.localAddress, on: sender)
            }
        }
        batch.flush(on: sender)
        #expect(batch.dropped == 1)
        let receive = ReceiveBatch(capacity: 8)
        var got: [[UInt8]] = []
        while got.count < 4, receiver.waitReadable(timeoutMilliseconds: 2000) {
            let count = receive.receive(from: receiver)
            for slot in 0..<count { got.append(Array(receive.slot(slot)[..<receive.length(slot)])) }
        }
        #expect(got == [[0], [1], [3], [4]])
    }

    @Test func addressesParseAndPrint() {
        #expect(UDPAddress(host: "127.0.0.1", port: 9)?.description == "127.0.0.1:9")
        #expect(UDPAddress(host: "localhost", port: 1) == .loopback(port: 1))
        #expect(UDPAddress(host: "not an address", port: 1) == nil)
        #expect(UDPAddress("127.0.0.2:7481") == UDPAddress(host: "127.0.0.2", port: 7481))
        #expect(UDPAddress("localhost:9") == .loopback(port: 9))
        let address = UDPAddress(ipv4: 0xC000_0201, port: 65_535)
        #expect(UDPAddress(address.description) == address)
        for text in ["", "127.0.0.1", "127.0.0.1:", ":80", "127.0.0.1:65536", "127.0.0.1:-1", "example.org:80"] {
            #expect(UDPAddress(text) == nil, "\(text)")
        }
    }
}
