import MediaTransport

/// The packets being fanned out, served in turns: each turn sends some datagrams of every packet in the queue (a
/// speaker's packets one after another), and the forwarder reads its sockets between turns.
///
/// Sending one packet to every listener before looking at the next made a packet wait for every listener of
/// every packet ahead of it: behind three speakers in a room of a thousand, about 4 ms, and behind a room of
/// 10,000, about 45 ms, whatever the size of its own room. In turns, a packet's first listeners get it within a
/// turn of its arrival, a small room's packet leaves within a turn, and a packet relayed from another node
/// starts on this one's listeners as soon as it arrives, not after this node's own speakers' listeners. A
/// packet's last listener gets it no later on average: the same datagrams are sent, in another order.
///
/// Owned by the forwarding thread. The packets are copied into slots of their own, since the receive batch they
/// arrived in is read into again before their fan-out ends.
final class FanOutQueue {
    typealias Listener = (ssrc: UInt32, address: UDPAddress)

    private struct Fanout {
        let slot: Int
        let length: Int
        /// The room's listeners when the packet arrived (a reference to the room's array, not a copy).
        let listeners: [Listener]
        /// The packet's speaker, who does not get it back.
        let speaker: UInt32
        var next = 0
        /// An older packet of the same speaker is still being sent.
        var waiting = false
    }

    /// Datagrams of each packet per turn, at least: at 4–5 µs per datagram on loopback, a turn of three packets
    /// is about a fifth of a millisecond.
    static let turnSize = 16
    /// Datagrams per turn when few packets share it: one packet alone goes out 64 at a time, so a big room's
    /// fan-out does not pay a `poll` and a `sendmmsg` for every 16 listeners.
    static let turnBudget = 64

    let slotSize: Int
    private let storage: UnsafeMutableRawBufferPointer
    private var freeSlots: [Int]
    private var fanouts: [Fanout] = []
    /// The speakers with a packet in the current turn (kept, so a turn allocates nothing).
    private var speakersInTurn: [UInt32] = []
    /// Listeners removed while packets listing them were queued: they get nothing more. Forgotten once the
    /// queue is empty, since every packet queued after a removal lists the room's listeners without them.
    private var removed: Set<UInt32> = []

    init(slots: Int, slotSize: Int) {
        self.slotSize = slotSize
        storage = .allocate(byteCount: slots * slotSize, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        freeSlots = Array((0..<slots).reversed())
        fanouts.reserveCapacity(slots)
        speakersInTurn.reserveCapacity(slots)
    }

    deinit { storage.deallocate() }

    var isEmpty: Bool { fanouts.isEmpty }

    /// Slots free for more packets.
    var available: Int { freeSlots.count }

    /// Queues `packet` for `listeners` but `speaker`; false (and nothing queued) when every slot is taken or the
    /// packet is larger than a slot.
    func enqueue(_ packet: UnsafeRawBufferPointer, to listeners: [Listener], exceptFor speaker: UInt32) -> Bool {
        guard !listeners.isEmpty else { return true }
        guard packet.count <= slotSize, let slot = freeSlots.popLast() else { return false }
        UnsafeMutableRawBufferPointer(mutating: bytes(slot: slot, length: packet.count)).copyMemory(from: packet)
        fanouts.append(Fanout(slot: slot, length: packet.count, listeners: listeners, speaker: speaker))
        return true
    }

    /// One turn: datagrams of every queued packet whose speaker has no older packet still in the queue
    /// (`turnBudget` shared among them, `turnSize` each at least), newest first, appended to `batch` (which sends
    /// when full). Returns how many; the caller sends the rest of the batch, then calls `endTurn`.
    ///
    /// A speaker's packets go out one after another, each to every listener before the next starts: a listener
    /// may be early in one packet's list and late in the next one's (the room's listeners are listed again
    /// when someone comes or goes), and must still get them in order.
    func turn(into batch: SendBatch, on socket: UDPSocket) -> Int {
        speakersInTurn.removeAll(keepingCapacity: true)
        for index in fanouts.indices {
            let speaker = fanouts[index].speaker
            fanouts[index].waiting = speakersInTurn.contains(speaker)
            if !fanouts[index].waiting { speakersInTurn.append(speaker) }
        }
        var appended = 0
        let share = max(Self.turnSize, Self.turnBudget / max(1, speakersInTurn.count))
        // Newest first: a packet that just arrived has its first listeners in this turn's first datagrams.
        for index in fanouts.indices.reversed() where !fanouts[index].waiting {
            let fanout = fanouts[index]
            let bytes = bytes(slot: fanout.slot, length: fanout.length)
            var next = fanout.next
            var taken = 0
            while next < fanout.listeners.count, taken < share {
                let listener = fanout.listeners[next]
                next += 1
                guard listener.ssrc != fanout.speaker, removed.isEmpty || !removed.contains(listener.ssrc) else {
                    continue
                }
                batch.append(bytes, to: listener.address, on: socket)
                taken += 1
            }
            fanouts[index].next = next
            appended += taken
        }
        return appended
    }

    /// The first `length` bytes of slot `slot`.
    private func bytes(slot: Int, length: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: storage[(slot * slotSize)..<(slot * slotSize + length)])
    }

    /// Frees the slots of the packets every listener has now. Called once the turn's batch has been sent: the
    /// batch points into the slots until then.
    func endTurn() {
        fanouts.removeAll { fanout in
            guard fanout.next >= fanout.listeners.count else { return false }
            freeSlots.append(fanout.slot)
            return true
        }
        if fanouts.isEmpty { removed.removeAll(keepingCapacity: true) }
    }

    /// A listener that left (or whose room closed): the packets already queued skip it.
    func remove(listener ssrc: UInt32) {
        guard !fanouts.isEmpty else { return }
        removed.insert(ssrc)
    }

    /// Forgets every queued packet (the forwarder is stopping).
    func removeAll() {
        for fanout in fanouts { freeSlots.append(fanout.slot) }
        fanouts.removeAll(keepingCapacity: true)
        removed.removeAll(keepingCapacity: true)
    }
}
