/// A sort key in one of the screen's sections. Keys compare without locale and end with the peer's id,
/// so every order is total and the same on every machine.
public protocol SectionKey: Comparable, Sendable {
    var id: PeerID { get }
}

/// Stage order: by role rank (hosts first), then by when the peer came on stage, then by id.
public struct StageKey: SectionKey {
    public let rank: Int
    /// Increases each time a peer comes on stage, as this state saw it; peers already on stage in a
    /// snapshot get theirs in order of joining.
    public let ticket: UInt64
    public let id: PeerID

    public static func < (a: StageKey, b: StageKey) -> Bool {
        if a.rank != b.rank { return a.rank < b.rank }
        if a.ticket != b.ticket { return a.ticket < b.ticket }
        return a.id < b.id
    }
}

/// Raised-hand order: first come, first served, then by id.
public struct HandKey: SectionKey {
    public let raisedAt: Timestamp
    public let id: PeerID

    public static func < (a: HandKey, b: HandKey) -> Bool {
        if a.raisedAt != b.raisedAt { return a.raisedAt < b.raisedAt }
        return a.id < b.id
    }
}

/// Audience order: by the lowercased name compared scalar by scalar (UTF-8 byte order, not the locale's
/// collation), with numbers in names in numeric order ("Crowd 2" before "Crowd 10"), then id.
public struct AudienceKey: SectionKey {
    public let folded: String
    /// The first eight UTF-8 bytes of `folded`, big-endian, so most comparisons are one integer compare.
    let head: UInt64
    public let id: PeerID

    public init(name: String, id: PeerID) {
        var folded = AudienceKey.fold(name)
        folded.makeContiguousUTF8()
        var head: UInt64 = 0
        var taken = 0
        for byte in folded.utf8.prefix(8) {
            head = head << 8 | UInt64(byte)
            taken += 1
        }
        self.folded = folded
        self.head = head << (8 * UInt64(8 - taken))
        self.id = id
    }

    /// The name as it sorts: Unicode default lowercasing, which does not depend on the locale, with each run of
    /// ASCII digits written as its length in two digits, then the digits without leading zeros. So numbers
    /// compare by value ("crowd 2" is "crowd 012", before "crowd 0210") and still sort where digits do, before
    /// letters. A number of more than 99 digits sorts as if it had 99.
    public static func fold(_ name: String) -> String {
        let lowered = name.lowercased()
        guard lowered.utf8.contains(where: isDigit) else { return lowered }
        var folded: [UInt8] = []
        folded.reserveCapacity(lowered.utf8.count + 8)
        var number: [UInt8] = []
        func writeNumber() {
            guard !number.isEmpty else { return }
            let significant = number.drop { $0 == UInt8(ascii: "0") }
            let digits = significant.isEmpty ? [UInt8(ascii: "0")] : Array(significant)
            let length = min(digits.count, 99)
            folded += [UInt8(ascii: "0") + UInt8(length / 10), UInt8(ascii: "0") + UInt8(length % 10)]
            folded += digits
            number.removeAll(keepingCapacity: true)
        }
        for byte in lowered.utf8 {
            if isDigit(byte) {
                number.append(byte)
            } else {
                writeNumber()
                folded.append(byte)
            }
        }
        writeNumber()
        return String(decoding: folded, as: UTF8.self)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    public static func < (a: AudienceKey, b: AudienceKey) -> Bool {
        if a.head != b.head { return a.head < b.head }
        let order = compareUTF8(a.folded, b.folded)
        if order != 0 { return order < 0 }
        return a.id < b.id
    }

    public static func == (a: AudienceKey, b: AudienceKey) -> Bool {
        a.head == b.head && a.id == b.id && compareUTF8(a.folded, b.folded) == 0
    }
}

/// Byte-wise comparison of two strings' UTF-8: negative, zero or positive.
func compareUTF8(_ a: String, _ b: String) -> Int {
    if let result = a.utf8.withContiguousStorageIfAvailable({ pa in
        b.utf8.withContiguousStorageIfAvailable { pb in compareBytes(pa, pb) }
    }), let result {
        return result
    }
    if a.utf8.elementsEqual(b.utf8) { return 0 }
    return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
}

private func compareBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
    let n = min(a.count, b.count)
    var i = 0
    while i < n {
        if a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
        i += 1
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

/// The peers of one section in screen order. Cheap to take: it shares storage with the state.
public struct PeerSection<Key: SectionKey>: RandomAccessCollection, Sendable {
    let keys: SortedList<Key>
    let peers: [PeerID: Peer]

    public var startIndex: Int { 0 }
    public var endIndex: Int { keys.count }
    public subscript(position: Int) -> Peer { peers[keys[position].id]! }

    /// The ids in order, without looking up the peers. A closure rather than a key path: in this generic type a
    /// key path is built by the runtime (demangling its type) each time it is taken, for every action the
    /// room's reducer settles the selection after.
    public var ids: LazyMapSequence<SortedList<Key>, PeerID> { keys.lazy.map { $0.id } }
}

/// The three sections of the room screen, kept sorted as events arrive.
/// On stage: peers whose role is on stage. Raised hands: everyone else with a hand up. Audience: the rest.
///
/// A peer's key is derived from the peer itself (plus its stage ticket), so no per-peer index is kept: a join
/// costs one sorted insert and no extra hashing.
struct Sections: Sendable, Equatable {
    enum Placement: Sendable, Equatable {
        case stage(StageKey)
        case hand(HandKey)
        case audience(AudienceKey)
        /// A recorder: in the room for everyone to know of (`RoomState.recording`), listed in no section.
        case hidden
    }

    var stage = SortedList<StageKey>()
    var hands = SortedList<HandKey>()
    var audience = SortedList<AudienceKey>()
    /// When each peer on stage came on stage; only stage peers have one, so the table stays small.
    var stageTickets: [PeerID: UInt64] = [:]
    var nextTicket: UInt64 = 0

    init() {}

    /// Starts over from a snapshot's peers with one sort per section.
    init(peers: some Sequence<Peer>, roles: RoleTable) {
        var stageKeys: [StageKey] = []
        var handKeys: [HandKey] = []
        var audienceKeys: [AudienceKey] = []
        var onStage: [Peer] = []
        for peer in peers where peer.role != .recorder {
            if roles.isOnStage(peer.role) {
                onStage.append(peer)
            } else if let at = peer.handRaisedAt {
                handKeys.append(HandKey(raisedAt: at, id: peer.id))
            } else {
                audienceKeys.append(AudienceKey(name: peer.name, id: peer.id))
            }
        }
        onStage.sort { ($0.joinedAt, $0.id) < ($1.joinedAt, $1.id) }
        for peer in onStage {
            stageTickets[peer.id] = nextTicket
            stageKeys.append(StageKey(rank: roles.rank(of: peer.role), ticket: nextTicket, id: peer.id))
            nextTicket += 1
        }
        stage = SortedList(stageKeys)
        hands = SortedList(handKeys)
        audience = SortedList(audienceKeys)
    }

    /// Where a placed peer's key is, from the peer as it was placed.
    func placement(of peer: Peer, roles: RoleTable) -> Placement {
        if peer.role == .recorder { return .hidden }
        if roles.isOnStage(peer.role), let ticket = stageTickets[peer.id] {
            return .stage(StageKey(rank: roles.rank(of: peer.role), ticket: ticket, id: peer.id))
        }
        if let at = peer.handRaisedAt { return .hand(HandKey(raisedAt: at, id: peer.id)) }
        return .audience(AudienceKey(name: peer.name, id: peer.id))
    }

    /// Places a peer that is not placed yet.
    mutating func insert(_ peer: Peer, roles: RoleTable) {
        if peer.role == .recorder { return }
        if roles.isOnStage(peer.role) {
            stageTickets[peer.id] = nextTicket
            stage.insert(StageKey(rank: roles.rank(of: peer.role), ticket: nextTicket, id: peer.id))
            nextTicket += 1
        } else if let at = peer.handRaisedAt {
            hands.insert(HandKey(raisedAt: at, id: peer.id))
        } else {
            audience.insert(AudienceKey(name: peer.name, id: peer.id))
        }
    }

    /// Takes a placed peer out, given the peer as it was placed.
    mutating func remove(_ peer: Peer, roles: RoleTable) {
        switch placement(of: peer, roles: roles) {
        case .stage(let key):
            stage.remove(key)
            stageTickets[peer.id] = nil
        case .hand(let key): hands.remove(key)
        case .audience(let key): audience.remove(key)
        case .hidden: break
        }
    }

    /// Moves a peer after a change, only when its key changed; a stage peer keeps its ticket.
    mutating func update(_ old: Peer, to new: Peer, roles: RoleTable) {
        let wasOnStage = roles.isOnStage(old.role)
        let isOnStage = roles.isOnStage(new.role)
        if wasOnStage && isOnStage {
            let (oldRank, newRank) = (roles.rank(of: old.role), roles.rank(of: new.role))
            guard oldRank != newRank, let ticket = stageTickets[old.id] else { return }
            stage.remove(StageKey(rank: oldRank, ticket: ticket, id: old.id))
            stage.insert(StageKey(rank: newRank, ticket: ticket, id: new.id))
            return
        }
        if !wasOnStage && !isOnStage && old.handRaisedAt == new.handRaisedAt && old.role != .recorder
            && new.role != .recorder
            && (old.handRaisedAt != nil || old.name == new.name)
        {
            return
        }
        remove(old, roles: roles)
        insert(new, roles: roles)
    }

    /// Equal when every section holds the same peers in the same order (ticket numbers aside).
    static func == (a: Sections, b: Sections) -> Bool {
        a.stage.map(\.id) == b.stage.map(\.id) && a.hands == b.hands && a.audience == b.audience
    }
}
