import StrictJSON

/// The room's record beside a recording (`FILE.json` beside `FILE.opus`): who was there, who spoke when, what
/// changed, each at its offset into the audio, and each person's speaking time. Format version 1, as
/// docs/recording.md describes it: the recorder writes it (``json``) and replay reads it (``parse(_:)``), strict
/// about what a replay needs and lenient about what it does not (unknown members and event kinds are passed over,
/// so a later recorder may add them without a new version).
public struct RecordingRecord: Sendable, Equatable {
    /// The version of the record format written and read; a reader refuses any other.
    public static let version: Int64 = 1
    /// The largest record read, in bytes (an hour's busy room is a few megabytes).
    public static let maxBytes = 256 * 1024 * 1024
    /// The deepest nesting read (the format itself nests three deep).
    public static let maxDepth = 8
    /// The most speaking time read for one person, in seconds (about 31 years): written to a tenth of a second,
    /// a time within it reads back as written.
    public static let maxSeconds = 1e9
    /// The longest recording a replay takes a record's or a file's word for, in milliseconds (a year: some 120 GB
    /// of audio at 32 kbit/s); a longer claim is taken as this long.
    public static let maxReplayMilliseconds: Int64 = 366 * 86_400_000

    /// The room's name.
    public var room: String
    /// The topic as it was last (each change is a `topic` event; the topic when the recording began is one at 0).
    public var topic: String
    /// When the recording began, as written (ISO 8601, UTC); empty when a record does not say.
    public var started: String
    /// When the audio begins, in milliseconds since the Unix epoch; 0 when a record does not say.
    public var startedMilliseconds: Int64
    /// The length of the audio the record covers, in milliseconds.
    public var durationMilliseconds: Int64
    /// Whether the recorder closed the file cleanly; false while it records and after a crash.
    public var complete: Bool
    /// Everyone seen, with the role they had when the recording began or when they arrived.
    public var people: [Person]
    /// What happened, in time order (a record written out of order is put in order when read, keeping the written
    /// order of events at the same offset).
    public var events: [Event]
    /// Each person's speaking time, most first.
    public var speakers: [Speaker]

    /// Someone seen during the recording.
    public struct Person: Sendable, Equatable {
        public var peer: PeerID
        /// Who the person is beyond this connection (the peer's id when the record does not say).
        public var identity: String
        public var name: String
        public var role: RoleName

        public init(peer: PeerID, identity: String? = nil, name: String, role: RoleName) {
            self.peer = peer
            self.identity = identity ?? peer.rawValue
            self.name = name
            self.role = role
        }
    }

    /// One thing that happened, at `at` milliseconds into the audio.
    public struct Event: Sendable, Equatable {
        /// What happened.
        public enum Kind: Sendable, Equatable {
            /// On the stage with this role when the recording began (at 0).
            case stage(PeerID, RoleName)
            /// A talk spurt, until `end` (milliseconds into the audio).
            case talk(PeerID, end: Int64)
            /// A new role, given by `by` (nil: by the server, or taken by the person).
            case role(PeerID, RoleName, by: PeerID?)
            /// A new topic (empty: cleared); at 0, the topic when the recording began.
            case topic(String, by: PeerID?)
            /// A chat message to everyone.
            case chat(PeerID, name: String, text: String)
            /// Someone came in.
            case join(PeerID, name: String, role: RoleName)
            /// Someone left.
            case leave(PeerID)
        }

        public var at: Int64
        public var kind: Kind

        public init(at: Int64, _ kind: Kind) {
            self.at = at
            self.kind = kind
        }
    }

    /// One person's speaking time over the recording.
    public struct Speaker: Sendable, Equatable {
        public var identity: String
        public var name: String
        public var seconds: Double
        public var turns: Int

        public init(identity: String, name: String, seconds: Double, turns: Int) {
            self.identity = identity
            self.name = name
            self.seconds = seconds
            self.turns = turns
        }
    }

    /// A record; `started` is the UTC text of `startedMilliseconds` unless given.
    public init(
        room: String, topic: String = "", started: String? = nil, startedMilliseconds: Int64 = 0,
        durationMilliseconds: Int64, complete: Bool = true, people: [Person] = [], events: [Event] = [],
        speakers: [Speaker] = []
    ) {
        self.room = room
        self.topic = topic
        self.started = started ?? Self.utcText(milliseconds: startedMilliseconds)
        self.startedMilliseconds = startedMilliseconds
        self.durationMilliseconds = durationMilliseconds
        self.complete = complete
        self.people = people
        self.events = events
        self.speakers = speakers
    }

    /// The record's path for a recording's: the same name, `.json` in place of `.opus` (or added).
    public static func path(forAudio audio: String) -> String {
        audio.hasSuffix(".opus") ? String(audio.dropLast(5)) + ".json" : audio + ".json"
    }

    /// A moment as UTC text to the second, `2026-12-06T05:00:00Z`.
    public static func utcText(milliseconds: Int64) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        var days = seconds / 86_400
        var rest = seconds % 86_400
        if rest < 0 {
            rest += 86_400
            days -= 1
        }
        // Days since 1970-01-01 to a civil date (proleptic Gregorian).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func padded(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T\(padded(rest / 3_600, 2)):"
            + "\(padded(rest / 60 % 60, 2)):\(padded(rest % 60, 2))Z"
    }
}
