import Platform
import RoomCore
import RoomProtocol

/// The room directory's codec: what a lobby reads from `/rooms` (`rooms`, `rooms_changed` with and without
/// `since`, `error`, `lobby`, `room_opened`), the requests the directory reads from a lobby (`list`, `open_room`), and what a node of a cluster reads of
/// the rooms other nodes own (their lobby entries in Redis).
enum DirectoryChecks {
    /// Input: the text of one message, read as the lobby reads the directory's messages and as the directory reads
    /// a lobby's request.
    static func directory(_ input: [UInt8]) throws(FuzzFailure) {
        try request(input)
        try clusterEntry(input)
        guard let message = try decodedOrRefused(input, "a message", DirectoryCodec.decodeMessage) else {
            return
        }
        try checkNumbers(message)
        for listing in listings(of: message) { try checkListing(listing) }
        try roundTrip(message)
        // What a lobby takes in (DirectorySession): nothing a terminal would act on, stable, and still a message.
        let clean = message.sanitized
        try expect(clean.sanitized == clean, "cleaning \(message) twice changes it")
        for text in strings(of: clean) {
            try expect(JSONChecks.isSafe(text), "unsafe text survives cleaning: \(text.debugDescription)")
        }
        try expect(clean.seq == message.seq, "cleaning changed the number of \(message)")
        try roundTrip(clean)
    }

    /// A node's entry for a room: refused with a known code, or a change a lobby could be sent, stable through
    /// encoding.
    static func clusterEntry(_ input: [UInt8]) throws(FuzzFailure) {
        guard let entry = try decodedOrRefused(input, "an entry", DirectoryCodec.decodeEntry) else {
            return
        }
        try expect(entry.epoch <= UInt64(Int64.max), "an entry under epoch \(entry.epoch)")
        if case .added(let listing, _) = entry.change { try checkListing(listing) }
        if case .updated(let listing) = entry.change { try checkListing(listing) }
        try expect(
            PlainName.isValid(entry.change.room), "an entry for \(entry.change.room.debugDescription)")
        try expectStableRoundTrip(
            entry, "\(entry)", encode: DirectoryCodec.encode, decode: DirectoryCodec.decodeEntry)
    }

    static func request(_ input: [UInt8]) throws(FuzzFailure) {
        guard let request = try decodedOrRefused(input, "a request", DirectoryCodec.decodeRequest) else {
            return
        }
        if case .openRoom(let name, let topic, let id) = request {
            try expect(name.utf8.count <= 256, "a room name of \(name.utf8.count) bytes was read")
            try expect(topic.count <= ControlLimits.maxTopicCharacters, "a topic of \(topic.count) characters was read")
            try expect(id.utf8.count <= ControlLimits.maxRequestIDBytes, "an id of \(id.utf8.count) bytes was read")
        }
        try expect(input.count <= DirectoryCodec.maxRequestBytes, "a request of \(input.count) bytes was read")
        try expect(
            (try? DirectoryCodec.decodeRequest(DirectoryCodec.encode(request))) == request,
            "the encoding of \(request) is refused")
    }

    /// The numbers a lobby finds gaps by: `since` comes before `seq`, and a message follows exactly the one it
    /// names (`since`, else `seq - 1`).
    static func checkNumbers(_ message: DirectoryMessage) throws(FuzzFailure) {
        switch message {
        case .rooms(_, let seq):
            try expect(seq >= 0, "a list numbered \(seq)")
            try expect(message.follows(seq &- 1) && message.follows(.min), "a whole list does not follow everything")
        case .changed(_, let seq, let since):
            try expect(seq >= 0, "changes numbered \(seq)")
            let previous = since ?? seq - 1
            if let since { try expect(since >= 0 && since < seq, "since \(since) is not below seq \(seq)") }
            try expect(message.follows(previous), "changes \(seq) since \(previous) do not follow \(previous)")
            try expect(!message.follows(previous &+ 1), "changes \(seq) follow \(previous &+ 1) too")
            try expect(!message.follows(previous &- 1), "changes \(seq) follow \(previous &- 1) too")
        case .error, .opened, .refused, .welcome:
            try expect(message.seq == nil, "an answer with a number")
        }
    }

    static func checkListing(_ listing: RoomListing) throws(FuzzFailure) {
        try expect(PlainName.isValid(listing.room), "a listing of \(listing.room.debugDescription)")
        try expect(listing.stage.count <= RoomListing.maxStageNames, "a stage of \(listing.stage.count) names")
        try expect(
            listing.onStage >= listing.stage.count, "\(listing.onStage) on a stage naming \(listing.stage.count)")
        try expect(listing.listeners >= 0 && listing.raisedHands >= 0, "negative counts in \(listing)")
        try expect(JSONChecks.isSafe(listing.topic), "an unclean topic \(listing.topic.debugDescription)")
        for member in listing.stage {
            try expect(JSONChecks.isSafe(member.name), "an unclean stage name \(member.name.debugDescription)")
        }
        try expect(
            listing.audience.count <= RoomListing.maxAudienceNames, "an audience of \(listing.audience.count) names")
        try expect(
            listing.listeners >= listing.audience.count,
            "\(listing.listeners) listening, naming \(listing.audience.count)")
        for name in listing.audience {
            try expect(JSONChecks.isSafe(name), "an unclean listener name \(name.debugDescription)")
        }
    }

    static func roundTrip(_ message: DirectoryMessage) throws(FuzzFailure) {
        try expectStableRoundTrip(
            message, "\(message)", maxBytes: DirectoryCodec.maxMessageBytes, encode: DirectoryCodec.encode,
            decode: DirectoryCodec.decodeMessage)
    }

    static func listings(of message: DirectoryMessage) -> [RoomListing] {
        switch message {
        case .rooms(let rooms, _): rooms
        case .changed(let changes, _, _):
            changes.compactMap { change -> RoomListing? in
                switch change {
                case .added(let listing, _), .updated(let listing): listing
                case .removed: nil
                }
            }
        case .error, .opened, .refused, .welcome: []
        }
    }

    /// Every string a directory message carries.
    static func strings(of message: DirectoryMessage) -> [String] {
        let removed: [String]
        switch message {
        case .changed(let changes, _, _):
            removed = changes.compactMap { if case .removed(let room, _) = $0 { room } else { nil } }
        case .error(let code, let text): removed = [code.rawValue, text]
        case .refused(let code, let text, let id): removed = [code.rawValue, text, id]
        case .opened(let room, let invite, let id): removed = [room, invite, id]
        case .rooms, .welcome: removed = []
        }
        return removed
            + listings(of: message).flatMap { listing in
                [listing.room, listing.topic] + listing.stage.flatMap { [$0.name, $0.role.rawValue] }
                    + listing.audience
            }
    }

    /// The messages of the protocol's examples and the directory tests: lists, every change, `since`, errors,
    /// hostile strings, and the lobby's request.
    static func seeds() -> [[UInt8]] {
        let lobby = RoomListing(
            room: "lobby", topic: "Friday terminal hour",
            stage: [
                RoomListing.StageMember(name: "Ana", role: .host),
                RoomListing.StageMember(name: "Bo", role: .moderator),
                RoomListing.StageMember(name: "Chen", role: .speaker),
            ], onStage: 3, listeners: 1197, raisedHands: 3, startedAt: 1_764_412_800_000)
        let rust = RoomListing(
            room: "rust", topic: "", stage: [RoomListing.StageMember(name: "Dara", role: .host)], onStage: 1,
            listeners: 0, raisedHands: 0, startedAt: 1_764_413_500_000)
        let jazz = RoomListing(
            room: "jazz", topic: "Late night jazz", stage: [RoomListing.StageMember(name: "Eli", role: .host)],
            onStage: 1, listeners: 2, raisedHands: 0, startedAt: 1_764_414_000_000, audience: ["Hana", "Ivo"])
        let crowded = RoomListing(
            room: "big.room_1", topic: "🎷 ZWJ 👩‍👩‍👧 and tones 👋🏽",
            stage: (0..<8).map { RoomListing.StageMember(name: "Speaker \($0)", role: .speaker) }, onStage: 40,
            listeners: 10_000, raisedHands: 12, startedAt: 0)
        let messages: [DirectoryMessage] = [
            .rooms([lobby, rust], seq: 12), .rooms([], seq: 0),
            .changed([.added(jazz, .started), .updated(lobby), .removed(room: "rust", .ended)], seq: 13),
            .changed([.updated(lobby), .removed(room: "jazz", .ended)], seq: 20, since: 13),
            .changed(
                [.added(crowded, .listed), .removed(room: "x", .empty), .removed(room: "y", .unlisted)], seq: 1,
                since: 0),
            .error(code: .rateLimited, message: "too many requests; slow down"),
            .error(code: .badRequest, message: "unknown message type \"lists\""),
            .opened(room: "jazz", invite: "eyJhbGciOiJIUzI1NiJ9.e30.c2ln", id: "open-1"),
            .welcome(openRooms: .hosts, mayOpen: true),
            .refused(code: .conflict, message: "A room called jazz exists already.", id: "open-2"),
        ]
        var seeds = messages.map(DirectoryCodec.encode)
        seeds.append(DirectoryCodec.encode(.list))
        seeds.append(DirectoryCodec.encode(.openRoom(name: "jazz", topic: "Late night jazz", id: "open-1")))
        seeds += [
            DirectoryCodec.ClusterEntry(change: .added(lobby, .started), epoch: 3, at: 1_764_412_801_000),
            DirectoryCodec.ClusterEntry(change: .removed(room: "jazz", .unlisted), epoch: 9, at: 1_764_412_900_000),
        ].map { DirectoryCodec.encode($0) }
        seeds += [
            #"{"v":1,"type":"list"}"#, #"{"type":"rooms_changed","seq":5,"since":5,"changes":[]}"#,
            #"{"type":"rooms","seq":1,"rooms":[{"name":"a","topic":"\u001b]0;owned\u0007","stage":[{"name":"\u202eAna","role":"ho\u0000st"}],"on_stage":0,"listeners":-1,"raised_hands":0,"started_at":1}]}"#,
            #"{"type":"error","code":"x\u001b[2J","message":"line\nbreak"}"#, #"{"type":"rooms_soon","seq":1}"#,
        ].map { Array($0.utf8) }
        return seeds
    }
}
