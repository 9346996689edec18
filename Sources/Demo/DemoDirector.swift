import Dispatch
import Foundation
import RoomClient
import RoomCore
import RoomProtocol
import Synchronization

/// What the demo reports besides the room's own events: the lines said on stage (subtitles for recordings) and
/// problems with the bots.
public enum DemoNote: Sendable, Equatable {
    /// `clip` has started playing.
    case line(DemoClip)
    /// Something went wrong with one bot; the demo carries on without it.
    case problem(String)
}

/// How the demo ended.
public enum DemoEnd: Sendable, Equatable {
    /// Someone ended the room.
    case roomEnded(by: String, reason: String)
    /// `stop()` was called.
    case stopped
}

/// How the director runs the room.
public struct DemoSettings: Sendable {
    public var cast: DemoCast
    /// The topic the moderator sets when the room opens.
    public var topic = "Friday terminal hour"
    public var clips: DemoClipLibrary
    /// Makes each speaking bot's voice.
    public var voice: DemoVoiceFactory = { _ in TimedVoice() }
    /// Seconds a raised hand waits before the moderator invites it, so the stage moves even when you only
    /// watch; nil leaves every invitation to you.
    public var moderatorInvitesAfter: Double? = 45
    /// Seconds between chat messages from the audience, drawn at random from this range.
    public var chatEvery: ClosedRange<Double> = 6...14
    /// Seconds of silence between two lines, drawn at random from this range.
    public var pause: ClosedRange<Double> = 0.6...1.4
    /// Hears about lines as they start and about problems.
    public var notes: @Sendable (DemoNote) -> Void = { _ in }
}

/// Runs the demo room's bots: the moderator, the speakers taking turns, the listeners who raise their hands, and
/// the audience who chat, each reacting to what happens in the room (an invitation is accepted, a move back to
/// the audience quiets a speaker, a removal takes the bot out, the end of the room ends the demo).
///
/// Threads: sessions deliver events on their own threads and timers fire on Dispatch's; every decision is made
/// under the one lock around `State`, and requests and clips are started after it is released.
public final class DemoDirector: Sendable {
    private let server: DemoServer
    private let settings: DemoSettings
    private let crowd: AudienceCrowd
    private let state: Mutex<State>
    private let ended = DispatchSemaphore(value: 0)
    private let principalIDs: Set<String>
    private let lineSpeakers: Set<String>

    private struct Bot {
        var session: RoomSession
        var voice: any DemoVoice
        var joined = false
    }

    private struct State {
        var conversation: Conversation
        var bots: [String: Bot] = [:]
        /// Room events already acted on, by sequence number: every session sees most of them.
        var seen: Set<Int64> = []
        var roles: [String: String] = [:]
        var hands: [String: Int64] = [:]
        var invitedByModerator: Set<String> = []
        /// Guests whose line has been queued once already.
        var guestsHeard: Set<String> = []
        var advanceScheduled = false
        /// Whether the room has the demo's topic.
        var topicSet = false
        /// Counts lines, so a late `done` of a cut-off clip is ignored.
        var lineNumber = 0
        var end: DemoEnd?
    }

    /// A director for the room `server` serves; nothing joins before `start()`.
    init(server: DemoServer, settings: DemoSettings) throws(DemoError) {
        self.server = server
        self.settings = settings
        crowd = try AudienceCrowd(url: server.url)
        state = Mutex(State(conversation: Conversation(script: settings.clips.conversation)))
        principalIDs = Set(settings.cast.principals.map(\.identity))
        lineSpeakers = Set(settings.clips.clips.map(\.speaker))
    }

    /// Connects the bots and starts the room's timeline. Returns once the bots with a part have joined and the
    /// topic is set (or after 5 s); the audience keeps joining in the background.
    public func start() throws(DemoError) {
        let cast = settings.cast
        var sessions: [(String, RoomSession, any DemoVoice)] = []
        for member in cast.principals {
            let token = try server.token(for: member)
            let identity = member.identity
            let voice = settings.voice(identity)
            let session: RoomSession
            do {
                session = try RoomSession(
                    url: server.url, token: token,
                    reconnect: ReconnectPolicy(
                        initialDelay: .milliseconds(200), maximumDelay: .seconds(2), maximumAttempts: 5, jitter: 0.5),
                    media: voice.media
                ) { [self] event in
                    handle(event, from: identity)
                }
            } catch {
                throw DemoError(place: "bot \(identity)", problem: error.description)
            }
            voice.attach(session)
            sessions.append((identity, session, voice))
        }
        state.withLock { state in
            for (identity, session, voice) in sessions {
                state.bots[identity] = Bot(session: session, voice: voice)
            }
            if let opening = settings.clips.clip(.opening, by: cast.moderator.identity) {
                state.conversation.enqueue(opening)
            }
        }
        for (_, session, _) in sessions { session.start() }

        var tokens: [(identity: String, token: String)] = []
        for member in cast.audience { tokens.append((member.identity, try server.token(for: member))) }
        crowd.join(tokens) { [notes = settings.notes] identity, problem in
            notes(.problem("\(identity) could not join: \(problem)"))
        }

        for raiser in cast.handRaisers {
            after(raiser.raisesAfter) { [self] in raiseHand(raiser.member.identity) }
        }
        scheduleChat()
        scheduleModeratorCheck()
        waitUntilReady(timeout: 5)
    }

    /// Waits until every bot with a part has joined and the topic is set, so whoever comes next finds the room
    /// ready; gives up after `timeout` seconds (a bot that cannot join is reported and left out).
    private func waitUntilReady(timeout: Double) {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let ready = state.withLock { state in
                state.topicSet && state.bots.count == principalIDs.count && state.bots.values.allSatisfy(\.joined)
            }
            if ready { return }
            usleep(20_000)
        }
    }

    /// Blocks until the room ends or `stop()` is called.
    public func waitForEnd() -> DemoEnd {
        ended.wait()
        ended.signal()
        return state.withLock { $0.end ?? .stopped }
    }

    /// Whether the demo is over.
    public var isOver: Bool { state.withLock { $0.end != nil } }

    /// Ends the demo: every bot leaves, voices stop, and the connections close. Safe to call more than once and
    /// from any thread but a session's.
    public func stop() {
        finish(.stopped)
        let bots = state.withLock { state -> [Bot] in
            defer { state.bots.removeAll() }
            return Array(state.bots.values)
        }
        for bot in bots {
            bot.voice.close()
            bot.session.leave()
        }
        crowd.shutdown()
        for bot in bots { bot.session.shutdown() }
    }

    // MARK: Room events

    private func handle(_ event: SessionEvent, from identity: String) {
        switch event {
        case .message(let message), .reconnected(let message):
            if case .joined(let snapshot) = message.event {
                joined(snapshot, as: identity)
            } else if let seq = message.seq {
                let fresh = state.withLock { state -> Bool in
                    guard state.end == nil else { return false }
                    guard state.seen.insert(seq).inserted else { return false }
                    // Sessions are never far apart: what is well behind the newest event will not come again.
                    if state.seen.count > 20_000 {
                        let newest = state.seen.max() ?? seq
                        state.seen = state.seen.filter { $0 > newest - 10_000 }
                    }
                    return true
                }
                if fresh { roomEvent(message.event) }
            }
        case .reconnecting:
            break
        case .ended(let end):
            let bot = state.withLock { state -> Bot? in
                if state.conversation.silence(identity) { state.lineNumber += 1 }
                return state.bots.removeValue(forKey: identity)
            }
            bot?.voice.close()
            switch end {
            case .roomEnded: finish(.roomEnded(by: "", reason: ""))
            case .connectionFailed(let problem, _): settings.notes(.problem("\(identity): \(problem)"))
            case .refused(let code, let reason): settings.notes(.problem("\(identity) refused (\(code)): \(reason)"))
            case .left, .closedByServer, .removed, .replaced: break
            }
            // The session's own thread is stopped later, from another thread.
            if let bot { DispatchQueue.global().async { bot.session.shutdown() } }
        }
    }

    private func joined(_ snapshot: JoinedSnapshot, as identity: String) {
        var unmute = false
        state.withLock { state in
            state.bots[identity]?.joined = true
            for peer in snapshot.peers.map(\.peer) {
                state.roles[peer.id.rawValue] = peer.role.rawValue
                state.hands[peer.id.rawValue] = peer.handRaisedAt
            }
            guard let me = snapshot.peers.first(where: { $0.peer.id.rawValue == identity })?.peer,
                isOnStage(me.role.rawValue)
            else { return }
            if me.muted {
                unmute = true
            } else {
                state.conversation.allow(identity)
            }
        }
        if unmute { send(.setMute(false), as: identity) }
        if snapshot.topic == settings.topic {
            state.withLock { $0.topicSet = true }
        } else if identity == settings.cast.moderator.identity {
            send(.setTopic(settings.topic), as: identity)
        }
        advanceSoon()
    }

    private func roomEvent(_ event: WireEvent) {
        switch event {
        case .peerJoined(let announced):
            state.withLock { state in
                state.roles[announced.peer.id.rawValue] = announced.peer.role.rawValue
            }
        case .peersJoined(let peers):
            state.withLock { state in
                for announced in peers { state.roles[announced.peer.id.rawValue] = announced.peer.role.rawValue }
            }
        case .peerLeft(let id, _), .removed(let id, _, _):
            let peer = id.rawValue
            quiet(peer) { state in
                state.roles[peer] = nil
                state.hands[peer] = nil
            }
        case .peersLeft(let departures):
            for departure in departures {
                let peer = departure.peer.rawValue
                quiet(peer) { state in
                    state.roles[peer] = nil
                    state.hands[peer] = nil
                }
            }
        case .roleChanged(let peer, let role, _, _):
            roleChanged(peer.rawValue, to: role.rawValue)
        case .handRaised(let peer, let at):
            state.withLock { $0.hands[peer.rawValue] = at }
        case .handLowered(let peer, _):
            state.withLock { $0.hands[peer.rawValue] = nil }
        case .muteChanged(let peer, let muted, _):
            muteChanged(peer.rawValue, muted: muted)
        case .invited(let peer, _, _):
            invited(peer.rawValue)
        case .roomEnded(let by, let reason):
            finish(.roomEnded(by: by.rawValue, reason: reason))
        case .topicChanged(let topic, _):
            state.withLock { $0.topicSet = topic == settings.topic }
        case .joined, .speakers, .networkQuality, .chat, .inviteDeclined, .inviteWithdrawn, .inviteExpired,
            .askedToMute, .roomEnding, .handsAllowed, .error, .listingChanged, .inviteLink, .links, .bans, .micChanged,
            .playingChanged, .knock, .waiting, .reaction, .recording, .streaming:
            break
        case .stats:
            break
        }
    }

    private func roleChanged(_ peer: String, to role: String) {
        let wasOnStage = state.withLock { state -> Bool in
            defer {
                state.roles[peer] = role
                state.hands[peer] = nil
            }
            return state.roles[peer].map(isOnStage) ?? false
        }
        guard isOnStage(role) else {
            quiet(peer) { _ in }
            return
        }
        guard !wasOnStage else { return }
        if principalIDs.contains(peer) {
            if lineSpeakers.contains(peer) {
                greet(peer)
                send(.setMute(false), as: peer)
            }
        } else {
            after(1.5) { [self] in
                crowd.send(.chat(Self.thanks.randomElement() ?? "Thanks!", to: .everyone), as: peer)
            }
        }
    }

    private func muteChanged(_ peer: String, muted: Bool) {
        if muted {
            quiet(peer) { _ in }
            return
        }
        state.withLock { state in
            guard state.roles[peer].map(isOnStage) ?? false, state.bots[peer] != nil else { return }
            state.conversation.allow(peer)
            if !state.guestsHeard.contains(peer), let line = settings.clips.clip(.invited, by: peer) {
                state.guestsHeard.insert(peer)
                state.conversation.enqueue(line)
            }
        }
        advanceSoon()
    }

    private func invited(_ peer: String) {
        let delay = Double.random(in: 0.8...1.6)
        if principalIDs.contains(peer) {
            after(delay) { [self] in send(.acceptInvite, as: peer) }
        } else {
            after(delay) { [self] in crowd.send(.acceptInvite, as: peer) }
        }
    }

    /// The moderator welcomes someone coming on stage, before their first words.
    private func greet(_ peer: String) {
        let moderator = settings.cast.moderator.identity
        guard peer != moderator, let greeting = settings.clips.clip(.guest, by: moderator) else { return }
        state.withLock { state in
            guard state.bots[moderator] != nil, state.roles[moderator].map(isOnStage) ?? false else { return }
            state.conversation.enqueue(greeting)
        }
    }

    /// Silences `peer` (stopping a clip they are in the middle of) after `change` is applied to the state.
    private func quiet(_ peer: String, _ change: (inout State) -> Void) {
        let voice = state.withLock { state -> (any DemoVoice)? in
            change(&state)
            guard state.conversation.silence(peer) else { return nil }
            state.lineNumber += 1
            return state.bots[peer]?.voice
        }
        if let voice {
            voice.stop()
            advanceSoon()
        }
    }

    // MARK: The stage

    /// Starts the next line after a short pause, unless one is already coming.
    private func advanceSoon() {
        let schedule = state.withLock { state -> Bool in
            guard state.end == nil, state.conversation.current == nil, !state.advanceScheduled else { return false }
            state.advanceScheduled = true
            return true
        }
        if schedule { after(Double.random(in: settings.pause)) { [self] in advance() } }
    }

    private func advance() {
        let started = state.withLock { state -> (DemoClip, any DemoVoice, Int)? in
            state.advanceScheduled = false
            guard state.end == nil, let line = state.conversation.next() else { return nil }
            guard let voice = state.bots[line.speaker]?.voice else {
                state.conversation.silence(line.speaker)
                return nil
            }
            state.lineNumber += 1
            return (line, voice, state.lineNumber)
        }
        guard let (line, voice, number) = started else { return }
        settings.notes(.line(line))
        voice.play(path: settings.clips.path(of: line), clip: line) { [self] in
            let current = state.withLock { state -> Bool in
                guard state.lineNumber == number else { return false }
                return state.conversation.finished(line)
            }
            if current { advanceSoon() }
        }
    }

    // MARK: Timeline

    private func raiseHand(_ identity: String) {
        let audience = state.withLock { state in state.roles[identity] == "audience" && state.bots[identity] != nil }
        if audience { send(.raiseHand, as: identity) }
    }

    private func scheduleChat() {
        after(Double.random(in: settings.chatEvery)) { [self] in
            guard !isOver else { return }
            if let member = crowd.present.randomElement(), let text = Self.chatter.randomElement() {
                crowd.send(.chat(text, to: .everyone), as: member)
            }
            scheduleChat()
        }
    }

    /// Once a second, the moderator invites the head of the queue when it has waited long enough.
    private func scheduleModeratorCheck() {
        guard let patience = settings.moderatorInvitesAfter else { return }
        after(1) { [self] in
            guard !isOver else { return }
            let moderator = settings.cast.moderator.identity
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let invitee = state.withLock { state -> String? in
                let waiting = state.hands.filter { !state.invitedByModerator.contains($0.key) }
                guard state.bots[moderator] != nil, state.roles[moderator].map(isOnStage) ?? false,
                    let (peer, at) = waiting.min(by: { $0.value < $1.value }), Double(now - at) / 1000 >= patience
                else { return nil }
                state.invitedByModerator.insert(peer)
                return peer
            }
            if let invitee { send(.invite(PeerID(invitee)), as: moderator) }
            scheduleModeratorCheck()
        }
    }

    // MARK: Plumbing

    /// Sends `request` from the bot `identity`. A session reports its snapshot a moment before it can send, and
    /// a reconnecting one cannot send at all, so a refused send is tried again for a while.
    private func send(_ request: ClientRequest, as identity: String, attempt: Int = 0) {
        guard let session = state.withLock({ $0.end == nil ? $0.bots[identity]?.session : nil }) else { return }
        guard !session.send(request), attempt < 100 else { return }
        after(0.05) { [self] in send(request, as: identity, attempt: attempt + 1) }
    }

    private func finish(_ end: DemoEnd) {
        let first = state.withLock { state -> Bool in
            guard state.end == nil else { return false }
            state.end = end
            return true
        }
        if first { ended.signal() }
    }

    private func after(_ seconds: Double, _ work: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: work)
    }

    private func isOnStage(_ role: String) -> Bool {
        role != "audience"
    }

    static let thanks = [
        "Thanks for bringing me up! I'll listen from here for now 🙂", "Oh hi! Mostly here to listen, thank you.",
    ]

    static let chatter = [
        "hello from Lisbon 👋", "tmux gang", "which font is that?", "+1 for fzf", "Ctrl-A forever",
        "first time here, this is fun", "light theme?! 😱", "こんばんは！", "is this recorded?", "great room",
        "vim or emacs, go", "my prefix key is backtick and I regret nothing", "안녕하세요", "same here",
        "can someone share the dotfiles link?", "Saludos desde México", "🙌",
    ]
}
