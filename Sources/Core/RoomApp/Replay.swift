import RoomCore
import TermUI

/// A replay of a recording (`clubroom replay`): where it is, whether it plays, and the room's record, when there
/// is one, to show the room as it was. Changed only by `reduceReplay`.
public struct ReplayState: Sendable, Equatable {
    /// How far one press of ← or → moves, in milliseconds.
    public static let seekStep: Int64 = 10_000

    /// The room over time; nil when the recording plays without its record.
    public let timeline: ReplayTimeline?
    /// What the recording is called: the room's name, or the file's name when there is no record.
    public let title: String
    /// The audio's length in milliseconds, at most `RecordingRecord.maxReplayMilliseconds` (whatever a damaged
    /// file or record claims), so that no position or seek can overflow.
    public let length: Int64
    /// Where the replay is, in milliseconds.
    public var position: Int64 = 0
    public var paused = false
    /// Whether it played to the end.
    public var ended = false
    /// Whether the person asked to quit.
    public var quitting = false
    /// Whether the chat and event pane is shown.
    public var chatVisible = true
    /// What the replay says once, above its status line (the record is missing, or the recording was cut short).
    public var notice: String?
    /// ASCII only.
    public var ascii: Bool

    public init(timeline: ReplayTimeline?, title: String, length: Int64, notice: String? = nil, ascii: Bool = false) {
        self.timeline = timeline
        self.title = title
        self.length = min(max(0, length), RecordingRecord.maxReplayMilliseconds)
        self.notice = notice
        self.ascii = ascii
    }
}

/// What happened to a replay.
public enum ReplayAction: Sendable, Equatable {
    /// A key was pressed.
    case key(Key)
    /// The audio has played up to here (milliseconds).
    case position(Int64)
    /// The audio played to its end.
    case ended
}

/// What the player is to do.
public enum ReplayEffect: Sendable, Equatable {
    case pause
    case resume
    /// Go on from this offset (milliseconds).
    case seek(Int64)
    case quit
}

/// The replay's keys for the status line: space pauses (or, paused or at the end, plays), ←/→ seek 10 s, Tab
/// shows or hides the chat, q quits.
public func replayKeyHints(_ state: ReplayState) -> [KeyHint] {
    [
        KeyHint("space", state.paused || state.ended ? "play" : "pause"), KeyHint("\u{2190} \u{2192}", "10 s"),
        KeyHint("Tab", "chat"), KeyHint("q", "quit"),
    ]
}

/// The replay's reducer: keys become the player's effects; the player's reports move the position.
public func reduceReplay(_ state: inout ReplayState, _ action: ReplayAction) -> [ReplayEffect] {
    switch action {
    case .position(let offset):
        state.position = min(max(0, offset), state.length)
        return []
    case .ended:
        state.position = state.length
        state.ended = true
        return []
    case .key(let key):
        switch key {
        case .char("q"), .char("Q"), .ctrlC, .escape:
            state.quitting = true
            return [.quit]
        case .char(" "), .char("p"):
            if state.ended {
                state.ended = false
                state.paused = false
                state.position = 0
                return [.seek(0), .resume]
            }
            state.paused.toggle()
            return [state.paused ? .pause : .resume]
        case .left, .char("h"):
            state.position = max(0, state.position - ReplayState.seekStep)
            state.ended = false
            return [.seek(state.position)]
        case .right, .char("l"):
            let target = min(state.length, state.position + ReplayState.seekStep)
            state.position = target
            return [.seek(target)]
        case .tab:
            state.chatVisible.toggle()
            return []
        default:
            return []
        }
    }
}

/// The replay as text: the clock, the screen's model and the line mode's sentences.
public enum ReplayText {
    /// An offset as a clock: "00:12", "61:05" (minutes go past 59; hours are not split out).
    public static func clock(_ milliseconds: Int64) -> String {
        let seconds = max(0, milliseconds) / 1000
        let minutes = seconds / 60
        return (minutes < 10 ? "0" : "") + "\(minutes):" + (seconds % 60 < 10 ? "0" : "") + "\(seconds % 60)"
    }

    /// What the screen shows for the replay now.
    public static func model(_ state: ReplayState) -> ReplayScreenModel {
        var header = RoomScreenModel.Header(room: state.title, peopleCount: 0, connection: .disconnected)
        var stage: [RoomScreenModel.StageEntry] = []
        var audience: [String] = []
        var chat: [RoomScreenModel.ChatLine] = []
        if let timeline = state.timeline {
            let moment = timeline.moment(at: state.position)
            let roles = timeline.roles
            header.topic = moment.topic
            let shown = moment.people.filter { $0.role != recorderRole }
            header.peopleCount = shown.count
            let onStage = shown.enumerated().filter { roles.isOnStage($0.element.role) }
                .sorted { (roles.rank(of: $0.element.role), $0.offset) < (roles.rank(of: $1.element.role), $1.offset) }
                .map(\.element)
            stage = onStage.map { person in
                let talking = moment.talking.contains(person.peer)
                return RoomScreenModel.StageEntry(
                    name: person.name, role: RoomScreenMapper.displayRole(person.role, roles: roles),
                    level: talking ? 70 : 0, speaking: talking)
            }
            audience = shown.filter { !roles.isOnStage($0.role) }.map(\.name)
            chat = moment.lines.map { line in
                switch line {
                case .chat(let name, let text): return .message(from: name, text: text, to: nil)
                case .event(let text): return .event(text)
                }
            }
        }
        let room = RoomScreenModel(
            header: header, stage: stage, audience: audience,
            status: RoomScreenModel.StatusLine(name: "", role: .audience), chat: chat,
            chatVisible: state.chatVisible, notice: state.notice.map { RoomScreenModel.Notice($0) })
        return ReplayScreenModel(
            room: room, paused: state.paused, ended: state.ended,
            position: "\(clock(state.position)) / \(clock(state.length))", hints: replayKeyHints(state))
    }

    /// The line mode's opening: what is played (and that it was cut short), the topic, who is on the stage and how
    /// many listen.
    public static func opening(_ state: ReplayState) -> [String] {
        var lines: [String] = []
        // Without a record, why is said once on stderr; the screen shows it as its notice.
        guard let timeline = state.timeline else {
            return ["Replaying \(state.title), \(clock(state.length)) long."]
        }
        let record = timeline.record
        let when = record.started.isEmpty ? "" : " (recorded \(record.started))"
        lines.append("Replaying \(record.room)\(when), \(clock(state.length)) long.")
        if let notice = state.notice { lines.append(notice) }
        let moment = timeline.moment(at: 0)
        if !moment.topic.isEmpty { lines.append("Topic: \"\(moment.topic)\".") }
        let roles = timeline.roles
        let shown = moment.people.filter { $0.role != recorderRole }
        let onStage = shown.filter { roles.isOnStage($0.role) }
        lines.append(
            onStage.isEmpty
                ? "No one is on the stage."
                : "On the stage: " + English.list(onStage.map { "\($0.name) (\(roles.label(of: $0.role)))" }) + ".")
        let listening = shown.count - onStage.count
        if listening > 0 { lines.append("\(formatCount(listening)) listening.") }
        return lines
    }

    /// The line mode's sentences for what happened after `start` up to and including `end`, each with its time:
    /// "[00:12] Ana started talking.".
    public static func lines(_ state: ReplayState, after start: Int64, through end: Int64) -> [String] {
        guard let timeline = state.timeline else { return [] }
        return timeline.events(after: start, through: end).compactMap { event in
            timeline.sentence(for: event).map { "[\(clock(event.at))] \($0)" }
        }
    }

    /// The line mode's last line.
    public static func ending(_ state: ReplayState) -> String {
        "[\(clock(state.length))] The recording ends."
    }
}

/// The recorder's role: it is in the room, but no one sees it there.
private let recorderRole = RoleName("recorder")
