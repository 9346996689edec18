/// A live room as the lobby lists it: what someone deciding whether to walk in wants to know.
///
/// The server's room authority computes it; the directory sends it to lobby watchers; the lobby sorts and draws
/// it. Names are display names (already sanitized), never identities.
public struct RoomListing: Sendable, Equatable {
    /// Someone on the stage, as the listing names them.
    public struct StageMember: Sendable, Equatable {
        public var name: String
        public var role: RoleName

        public init(name: String, role: RoleName) {
            self.name = DisplayName.sanitize(name)
            self.role = role
        }
    }

    /// The most stage names a listing carries; `onStage` still counts everyone.
    public static let maxStageNames = 8
    /// The most listener names a listing carries, so an entry stays small however large the audience is;
    /// `listeners` still counts everyone.
    public static let maxAudienceNames = 5

    /// The room's name, as in `/rooms/ROOM`.
    public var room: String
    public var topic: String
    /// Who is on the stage, highest role first and then by when they joined; at most `maxStageNames`.
    public var stage: [StageMember]
    /// How many people are on the stage.
    public var onStage: Int
    /// How many people listen from the audience.
    public var listeners: Int
    /// A few of the listeners by display name, those who came first first; at most `maxAudienceNames`.
    public var audience: [String]
    /// How many hands are up.
    public var raisedHands: Int
    /// When the room went live (its first person arrived, or it was reopened), in milliseconds since the epoch.
    public var startedAt: Timestamp
    /// Whether the room is being recorded: told before anyone walks in.
    public var recording: Bool
    /// The server's destinations the room streams to live (by name): told before anyone walks in.
    public var streaming: [String]

    public init(
        room: String, topic: String, stage: [StageMember], onStage: Int, listeners: Int, raisedHands: Int,
        startedAt: Timestamp, recording: Bool = false, streaming: [String] = [], audience: [String] = []
    ) {
        self.audience = audience.prefix(Self.maxAudienceNames).map { DisplayName.sanitize($0) }
        self.recording = recording
        self.streaming = streaming
        self.room = room
        self.topic = DisplayName.sanitizeLine(topic, maxGraphemes: RoomState.maxTopicLength)
        self.stage = Array(stage.prefix(Self.maxStageNames))
        self.onStage = max(onStage, self.stage.count)
        self.listeners = max(0, listeners, self.audience.count)
        self.raisedHands = max(0, raisedHands)
        self.startedAt = startedAt
    }

    /// Everyone in the room.
    public var people: Int { onStage + listeners }

    /// The lobby's order: most listeners first, then most people on stage, then the longest running, then by
    /// name, so that equal rooms never swap places from one update to the next.
    public static func lobbyOrder(_ left: RoomListing, _ right: RoomListing) -> Bool {
        if left.listeners != right.listeners { return left.listeners > right.listeners }
        if left.onStage != right.onStage { return left.onStage > right.onStage }
        if left.startedAt != right.startedAt { return left.startedAt < right.startedAt }
        return compareUTF8(left.room, right.room) < 0
    }
}

/// Why a room appeared in the list.
public enum ListingArrival: String, Sendable, Equatable, CaseIterable {
    /// It went live: its first person arrived, or a host reopened it.
    case started
    /// Its host listed it while it was live.
    case listed
}

/// Why a room left the list.
public enum ListingDeparture: String, Sendable, Equatable, CaseIterable {
    /// Its host ended it.
    case ended
    /// The last person left.
    case empty
    /// Its host unlisted it; it goes on, but only people with a link for it can join.
    case unlisted
}

/// A change to the list of live rooms, as the room authority reports it and the directory sends it on.
public enum ListingChange: Sendable, Equatable {
    /// A room appears in the list.
    case added(RoomListing, ListingArrival)
    /// A listed room's details changed (topic, stage, counts).
    case updated(RoomListing)
    /// A room leaves the list.
    case removed(room: String, ListingDeparture)

    /// The room the change is about.
    public var room: String {
        switch self {
        case .added(let listing, _), .updated(let listing): listing.room
        case .removed(let room, _): room
        }
    }

    /// The change from what watchers last saw (`before`) to what is true now (`after`), given why a room
    /// appeared or left when it did; nil when watchers see no difference.
    public static func between(
        _ before: RoomListing?, _ after: RoomListing?, room: String, arrival: ListingArrival,
        departure: ListingDeparture
    ) -> ListingChange? {
        switch (before, after) {
        case (nil, nil): return nil
        case (nil, let now?): return .added(now, arrival)
        case (_?, nil): return .removed(room: room, departure)
        case (let then?, let now?): return then == now ? nil : .updated(now)
        }
    }
}

/// Who may open a room from the lobby (`serve --open-rooms`): nobody, people whose lobby link is a host's (its
/// role may end rooms), or anyone with a lobby link. The directory tells each lobby the rule and whether it may.
public enum OpenRoomsPolicy: String, Sendable, Equatable, CaseIterable {
    case nobody
    case hosts
    case anyone
}
