import RoomCore
import TermUI

/// Applies a server event: RoomCore changes the room, then the screen adds what it keeps beside it (the log,
/// the unread count, the alerts, the meters, the standing notice of a room that is over) and the sentence line
/// mode says.
func applyServer(_ state: inout AppState, _ event: ServerEvent, seq: UInt64) -> [AppEffect] {
    let before = EventContext(event, in: state)
    if case .reconnecting = event, state.beforeDrop == nil, state.room.hasJoined {
        state.beforeDrop = state.room
        state.droppedAt = state.now
    }
    var effects: [AppEffect]
    if case .error = event {
        // RoomCore keeps the server's own words; they are said below in plain words, once (in the pane too).
        _ = reduce(&state.room, .server(event, seq: seq))
        effects = []
    } else {
        effects = request(&state, .server(event, seq: seq))
    }
    let applied = state.room.ignoredEvents.total == before.ignored
    guard applied else { return effects }
    switch event {
    case .speakers, .chat, .error, .askedToMute, .reconnecting, .reconnected: break
    default: state.sectionsVersion &+= 1
    }
    let mergedMute = mutesWithRoleChange(&state, event)
    switch event {
    case .speakers(let levels):
        return effects + updateMeters(&state, levels)
    case .networkQuality:
        return effects + ownConnection(&state)
    case .stats(let people):
        return effects + receiveStats(&state, people)
    case .reaction:
        // Said at most once per `Narration.reactionPause`; the ones in between show only beside the names.
        if let said = state.reactionSaidAt, state.now - said < Narration.reactionPause { return effects }
        state.reactionSaidAt = state.now
        guard let sentence = Narration.sentence(for: event, context: before, state: state) else { return effects }
        return effects + [.say(sentence.text)]
    case .chat(let message):
        let mine = message.from == state.room.selfID
        if !mine && (!state.chatVisible || state.chatScroll > 0) { state.unreadChat += 1 }
        appendLog(
            &state, .message(from: message.fromName, text: message.text, to: Narration.audienceLabel(message, state)))
        if !mine, case .peer = message.to, state.notify.messages {
            effects += alert(&state, "message from \(message.fromName)")
        }
    case .handRaised(let id, _):
        if id != state.room.selfID, state.seesWholeQueue, state.notify.hands, !state.lineMode {
            effects += alert(&state, "\(state.room.peers[id]?.name ?? id.rawValue) raised a hand")
        }
    case .error(let code, let message):
        // RoomCore already put the server's words up; say them plainly with what to do next. `saved` is good news:
        // the server saves again after telling the hosts it could not.
        let kind: Notice.Kind = code == "saved" || code == "stream" ? .info : .error
        effects = show(&state, Notice(kind, Narration.explainError(code: code, message: message)))
        return effects
    case .invited(let id, _, _) where id == state.room.selfID:
        // The question wins over any dialog; the help can be opened over it.
        state.invitationAcceptSelected = true
        state.overlay = nil
    case .inviteLink:
        // The link is too long for the notice row: it goes in the event pane, which opens to show it.
        if !state.lineMode {
            state.chatVisible = true
            effects += show(
                &state, Notice(.info, "Your invite link is in the event pane: copy every line of it. Tab hides it."))
        }
    case .links:
        // A list of links is too long for the notice row: it goes in the event pane, which opens to show it.
        if !state.lineMode {
            state.chatVisible = true
            effects += show(&state, Notice(.info, "The room's links are in the event pane. Tab hides it."))
        }
    case .knock(let knock) where knock.state == .waiting:
        // A host or moderator is asked at once, on the notice row as in the event pane.
        effects += show(&state, Notice(.info, Narration.knockSentence(knock, state: state)))
        if state.notify.hands, !state.lineMode { effects += alert(&state, "\(knock.name) is waiting to come in") }
    case .waitingForHost:
        effects += show(&state, Notice(.info, Narration.waitingSentence))
    case .removed, .roomEnded, .peerLeft:
        if state.isOver {
            state.overlay = nil
            state.commandLine = nil
            // The sentence below says it; the notice stays on screen with the way out.
            state.notice = Notice(.error, Narration.endingNotice(state.room) + " Press q to close.")
            state.noticeExpires = nil
            state.noticeEndsOnUnmute = false
        }
    default:
        break
    }
    if case .joined = event {
        if !before.hadSnapshot { effects += earlierChat(&state) }
        // The join line says it too; on the screen it also stands on the notice row for a while.
        if !before.hadSnapshot, !state.lineMode, let recorded = Narration.recordingWho(state) {
            state.notice = Notice(.info, recorded)
            state.noticeExpires = state.now + AppState.noticeLifetime
        }
        effects += rejoined(&state, context: before)
        if state.leaveOnJoin {
            state.leaveOnJoin = false
            effects += narrate(&state, event, before) + request(&state, .request(.leave))
            return effects
        }
    }
    if mergedMute { return effects }
    effects += narrate(&state, event, before)
    if case .peerJoined(let peer, _) = event { state.quietRejoins.peers[peer.id] = nil }
    // A newcomer to a room that is ending is told as those present were told (`room_ending`), after the join line.
    if case .joined = event, !before.hadSnapshot, let ending = state.room.hostlessEnding {
        effects += show(&state, Notice(.info, Narration.endingSentence(ending, state)))
    }
    return effects
}

/// A newcomer arriving mid-conversation sees what was just said: the chat the room kept, above the join line and
/// marked as earlier (all of it in the pane; line mode says the last `Narration.earlierLines`).
private func earlierChat(_ state: inout AppState) -> [AppEffect] {
    let history = Array(state.room.chat)
    guard !history.isEmpty else { return [] }
    let heading = "Earlier in the room, before you joined:"
    appendLog(&state, .event(heading))
    for message in history {
        appendLog(
            &state, .message(from: message.fromName, text: message.text, to: Narration.audienceLabel(message, state)))
    }
    guard state.lineMode else { return [] }
    let shown = history.suffix(Narration.earlierLines)
    let count =
        shown.count == history.count
        ? "" : " (the last \(shown.count) of \(history.count) messages)"
    var effects: [AppEffect] = [.say("Earlier in the room, before you joined\(count):")]
    for message in shown {
        let event = ServerEvent.chat(message)
        if let sentence = Narration.sentence(for: event, context: EventContext(event, in: state), state: state) {
            effects.append(.say("  " + sentence.text))
        }
    }
    return effects
}

/// Once the reconnect grace has passed, the people who were here before the connection dropped and did not come
/// back have left: said once, together.
func awayForGood(_ state: inout AppState) -> [AppEffect] {
    guard !state.quietRejoins.peers.isEmpty, state.now >= state.quietRejoins.until else { return [] }
    let names = state.quietRejoins.peers.values.sorted()
    state.quietRejoins = ([:], 0)
    let text = English.list(names) + " left."
    appendLog(&state, .event(text))
    return [.say(text)]
}

/// The sentence for an event, logged (unless it is one of the few kept out of the pane) and said in line mode;
/// a sentence that is news for the person also goes up as a notice.
private func narrate(_ state: inout AppState, _ event: ServerEvent, _ before: EventContext) -> [AppEffect] {
    guard let sentence = Narration.sentence(for: event, context: before, state: state) else { return [] }
    if case .chat = event { return [.say(sentence.text)] }
    if sentence.notice { return show(&state, Notice(.info, sentence.text)) }
    if sentence.logged { appendLog(&state, .event(sentence.text)) }
    return [.say(sentence.text)]
}

/// Says once when this person's own connection becomes poor (a score of 2 or less), and once when it recovers (a
/// score of 4 or more: a 3 between is neither, so a loss near the line is not said again and again).
private func ownConnection(_ state: inout AppState) -> [AppEffect] {
    guard let id = state.room.selfID, let mine = state.room.quality[id] else { return [] }
    let text: String
    if mine.isPoor && !state.connectionPoor {
        state.connectionPoor = true
        text = Narration.poorConnection(mine)
    } else if mine.score >= PeerQuality.recovered && state.connectionPoor {
        state.connectionPoor = false
        text = "Your connection has recovered."
    } else {
        return []
    }
    appendLog(&state, .event(text))
    return [.say(text)]
}

/// Marks the status line, and rings the bell unless it is switched off.
private func alert(_ state: inout AppState, _ text: String) -> [AppEffect] {
    state.alert = text
    return state.notify.bell && !state.lineMode ? [.bell] : []
}

/// Whether the event is the mute that comes with a role change just told (the server mutes whoever changes role):
/// one action, one line.
private func mutesWithRoleChange(_ state: inout AppState, _ event: ServerEvent) -> Bool {
    defer {
        if case .roleChanged(let id, _, let by, _) = event {
            state.lastRoleChange = (id, by)
        } else if case .handLowered = event {
            // The hand that goes down on the way to the stage comes first; the role change follows.
        } else {
            state.lastRoleChange = nil
        }
    }
    guard case .muteChanged(let id, true, let by) = event, let last = state.lastRoleChange else { return false }
    return last.peer == id && last.by == by
}

/// After a reconnect the fresh snapshot replaced the room: says only what changed while the connection was down,
/// and why this person's microphone is off when it was on. People who were here are not announced again when
/// they rejoin in the next seconds (they were reconnecting too).
private func rejoined(_ state: inout AppState, context: EventContext) -> [AppEffect] {
    guard let old = state.beforeDrop else { return [] }
    state.beforeDrop = nil
    let away = state.droppedAt.map { state.now - $0 } ?? 0
    state.droppedAt = nil
    let room = state.room
    var changes: [String] = []
    // A recorder is no person: the recording itself is said below.
    let left = old.peers.values.filter { room.peers[$0.id] == nil && $0.role != .recorder }.sorted { $0.name < $1.name }
    let joined = room.peers.values.filter { old.peers[$0.id] == nil && $0.role != .recorder }.sorted {
        $0.name < $1.name
    }
    // Not said to have left yet: they may be reconnecting too (after a restart of the server, everyone is).
    if !left.isEmpty {
        changes.append(English.list(left.map(\.name)) + (left.count == 1 ? " is" : " are") + " not back yet")
    }
    if !joined.isEmpty { changes.append(English.list(joined.map(\.name)) + " joined") }
    for peer in room.peers.values.sorted(by: { $0.name < $1.name }) where peer.id != room.selfID {
        guard let was = old.peers[peer.id] else { continue }
        if was.role != peer.role {
            changes.append("\(peer.name) is \(English.article(room.roles.label(of: peer.role))) now")
        }
    }
    if old.topic != room.topic { changes.append("the topic is \"\(room.topic)\"") }
    if (old.recording == nil) != (room.recording == nil) {
        changes.append(room.recording == nil ? "the recording stopped" : "the room is being recorded now")
    }
    if old.handsAllowed != room.handsAllowed {
        changes.append(room.handsAllowed ? "raising hands is on again" : "raising hands is turned off")
    }
    if let ending = room.hostlessEnding, old.hostlessEnding == nil {
        changes.append(Narration.endingClause(ending, state))
    } else if old.hostlessEnding != nil, room.hostlessEnding == nil {
        changes.append("a \(room.roles.label(of: .host)) is back; the room goes on")
    }
    let (streamedBefore, streamedNow) = (old.streaming?.to ?? [], room.streaming?.to ?? [])
    if streamedBefore != streamedNow {
        changes.append(
            streamedNow.isEmpty
                ? "the room is no longer streamed live"
                : "the room is streamed live to \(English.list(streamedNow)) now")
    }
    state.quietRejoins = (
        Dictionary(left.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first }),
        state.now + Narration.placeKept
    )
    var effects: [AppEffect] = []
    let summary =
        changes.isEmpty
        ? "Reconnected; nothing changed while you were away."
        : "Reconnected. While you were away: " + changes.joined(separator: "; ") + "."
    effects += show(&state, Notice(.info, summary))
    if let me = room.me, let wasMe = old.peers[me.id] {
        if wasMe.role != me.role {
            let now = "You are \(English.article(room.roles.label(of: me.role))) now"
            // Back after the place was given up: the role went with it, which is no one's decision.
            let why =
                away > Narration.placeKept
                ? "You were away \(away / 1000) s, longer than the \(Narration.placeKept / 1000) s a place is kept, "
                    + "so your role went with it. " + now + "." : now + "."
            effects += show(&state, Notice(.info, why))
        }
        if !wasMe.muted && me.muted && room.roles.can(me.role, .publishAudio) {
            let how = state.lineMode ? "type /unmute" : "press m"
            effects += show(
                &state,
                Notice(.info, "Your microphone was turned off when the connection dropped; \(how) to talk again."))
        }
    }
    return effects
}

/// What an event needs from the state before it is applied (names of people who are about to leave, the
/// invitation it answers).
struct EventContext {
    var ignored: Int
    var subjectName: String?
    var subjectRole: RoleName?
    var hadSnapshot: Bool
    /// The subject's pending invitation, before the event.
    var invitation: Invitation?
    /// Whether the subject was here before the drop and rejoins now, quietly.
    var quietRejoin: Bool
    /// Where the room streamed, before the event.
    var streamingBefore: [String]

    init(_ event: ServerEvent, in state: AppState) {
        ignored = state.room.ignoredEvents.total
        hadSnapshot = state.room.hasJoined
        streamingBefore = state.room.streaming?.to ?? []
        let subject: PeerID?
        switch event {
        case .peerLeft(let id), .removed(let id, _, _), .roleChanged(let id, _, _, _), .inviteDeclined(let id),
            .inviteWithdrawn(let id, _), .inviteExpired(let id), .invited(let id, _, _):
            subject = id
        case .peerJoined(let peer, _):
            subject = peer.id
        default: subject = nil
        }
        if let subject, let peer = state.room.peers[subject] {
            subjectName = peer.name
            subjectRole = peer.role
        }
        invitation = subject.flatMap { state.room.invitations[$0] }
        quietRejoin =
            subject.map { state.quietRejoins.peers[$0] != nil && state.now < state.quietRejoins.until } ?? false
    }
}
