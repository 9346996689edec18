import MediaTransport
import Testing

@testable import MediaServer

/// The fan-out queue alone, over real sockets: what each turn sends, and to whom.
@Suite struct FanOutQueueTests {
    let out: UDPSocket
    let ear: UDPSocket
    let batch = SendBatch(capacity: 256)

    init() throws {
        out = try UDPSocket(binding: .loopback(port: 0))
        ear = try UDPSocket(binding: .loopback(port: 0), bufferBytes: 8 << 20)
    }

    /// `count` listeners, SSRCs from `first`, all on `socket`.
    func listeners(_ count: Int, from first: UInt32, on socket: UDPSocket) -> [FanOutQueue.Listener] {
        (0..<UInt32(count)).map { (first + $0, socket.localAddress) }
    }

    /// The first bytes of what `socket` holds, datagram by datagram.
    func drained(_ socket: UDPSocket) -> [UInt8] {
        var got: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while socket.waitReadable(timeoutMilliseconds: 100) {
            guard let received = buffer.withUnsafeMutableBytes({ socket.receive(into: $0) }), received.length > 0
            else { continue }
            got.append(buffer[0])
        }
        return got
    }

    /// Queues a one-byte packet `byte` for `list` but `speaker`.
    func enqueue(
        _ queue: FanOutQueue, _ byte: UInt8, to list: [FanOutQueue.Listener], exceptFor speaker: UInt32
    )
        -> Bool
    {
        [byte].withUnsafeBytes { queue.enqueue($0, to: list, exceptFor: speaker) }
    }

    func turn(_ queue: FanOutQueue) -> Int {
        let sent = queue.turn(into: batch, on: out)
        batch.flush(on: out)
        queue.endTurn()
        return sent
    }

    /// 64 datagrams a turn are shared among the packets in it, 16 each at least.
    @Test func aTurnSharesItsDatagramsAmongThePackets() {
        let queue = FanOutQueue(slots: 8, slotSize: 64)
        for speaker in 0..<5 {
            #expect(enqueue(queue, UInt8(speaker), to: listeners(200, from: 1000, on: ear), exceptFor: UInt32(speaker)))
        }
        #expect(turn(queue) == 5 * 16)
        let alone = FanOutQueue(slots: 8, slotSize: 64)
        #expect(enqueue(alone, 9, to: listeners(200, from: 1000, on: ear), exceptFor: 1))
        #expect(turn(alone) == 64)
        let two = FanOutQueue(slots: 8, slotSize: 64)
        for speaker in [UInt32(1), 2] {
            #expect(enqueue(two, 7, to: listeners(200, from: 1000, on: ear), exceptFor: speaker))
        }
        #expect(turn(two) == 64)
        _ = drained(ear)
    }

    /// A listener removed while a packet listing it is queued gets nothing more of it; once the queue has
    /// emptied, a new packet that lists it again reaches it.
    @Test func aRemovedListenerGetsNothingMoreOfTheQueuedPackets() throws {
        let removedSocket = try UDPSocket(binding: .loopback(port: 0))
        let queue = FanOutQueue(slots: 8, slotSize: 64)
        // 100 listeners on the ear, then the one to remove: the first turn (64) does not reach it.
        let list = listeners(100, from: 1000, on: ear) + [(UInt32(77), removedSocket.localAddress)]
        #expect(enqueue(queue, 1, to: list, exceptFor: 5))
        #expect(turn(queue) == 64)
        queue.remove(listener: 77)
        #expect(turn(queue) == 36)
        #expect(queue.isEmpty)
        #expect(drained(ear) == Array(repeating: 1, count: 100))
        #expect(drained(removedSocket) == [])
        #expect(enqueue(queue, 2, to: list, exceptFor: 5))
        #expect(turn(queue) == 64)
        #expect(turn(queue) == 37)
        #expect(drained(removedSocket) == [2])
        #expect(drained(ear) == Array(repeating: 2, count: 100))
    }
}
