import AudioCore
import RoomCore
import TermUI

/// Applies one action to the screen's state and returns what the runtime should do.
///
/// Pure and synchronous: time arrives in the actions. Requests go through RoomCore's `reduce`, which checks them
/// against the role table and says why when they are refused; the server's answer changes the room, never this
/// function. After every action the selection is settled on the same person (or near where they were).
///
/// The work is shared by responsibility: keys by mode (`Keys.swift` and the files of each dialog), the command
/// line, server events, level meters, volumes and the microphone each have a file of their own.
public func reduceApp(_ state: inout AppState, _ action: AppAction) -> [AppEffect] {
    var effects: [AppEffect] = []
    if let at = action.at { advance(&state, to: at) }
    switch action {
    case .key(let key, _):
        // A key means the person is at the terminal: the mark for what rang is seen, and whatever it makes the
        // program say is an answer, said even when it is the same as the last line.
        if key != .resize {
            state.alert = nil
            state.lastSaid = nil
        }
        effects = handleKey(&state, key)
    case .line(let text, _):
        state.alert = nil
        state.lastSaid = nil
        effects = runLine(&state, text, plain: true)
    case .server(let event, let seq, _):
        if case .reconnecting = event { state.roundTripMilliseconds = nil }
        // A new session's peer starts as working: what the microphone is like is said again.
        if case .joined = event { state.micReported = nil }
        effects = applyServer(&state, event, seq: seq)
        effects += syncMicrophone(&state)
        if state.noticeEndsOnUnmute, let me = state.room.me, !me.muted, state.room.roles.isOnStage(me.role) {
            state.notice = nil
            state.noticeExpires = nil
            state.noticeEndsOnUnmute = false
        }
    case .roles(let roles):
        if roles != state.room.roles {
            state.room = RoomState(roles: roles)
            state.sectionsVersion &+= 1
            state.meters = [:]
            state.talking = [:]
        }
    case .notice(let notice, _):
        effects = show(&state, notice)
    case .sessionEnded(let text, _):
        effects = endSession(&state, text)
    case .interrupted:
        effects = request(&state, .request(.leave))
    case .inputEnded:
        if state.room.hasJoined || state.sessionOver {
            effects = request(&state, .request(.leave))
        } else {
            // Leave once the room answers: if it never does, its failure is what the person must read.
            state.leaveOnJoin = true
        }
    case .microphone(let level):
        if state.microphoneLevel == level { return [] }
        state.microphoneLevel = level
    case .filePlay(let report):
        return filePlayReport(&state, report)
    case .microphoneMissing(let missing):
        let firstWord = !state.microphoneTried
        state.microphoneTried = true
        if state.microphoneMissing == missing && !firstWord { return [] }
        state.microphoneMissing = missing
        effects = sayMicrophoneCheck(&state)
    case .preview(let preview):
        if state.preview == preview || !state.showsInvitation { return [] }
        // A microphone that could not open runs on silence and is not tried again: the silence's level must not
        // cover why.
        if case .unavailable = state.preview, case .level = preview { return [] }
        state.preview = preview
        effects = sayMicrophoneCheck(&state)
    case .microphoneName(let name):
        state.microphoneName = name
    case .heard(let heard, _):
        effects = hearTalkers(&state, heard)
    case .roundTrip(let milliseconds):
        if state.roundTripMilliseconds == milliseconds { return [] }
        state.roundTripMilliseconds = milliseconds
    case .volumes(let volumes):
        adoptVolumes(&state, volumes)
    case .resize(let width, let height):
        state.screenWidth = max(0, width)
        state.screenHeight = max(0, height)
        if case .help(let scroll) = state.overlay {
            state.overlay = .help(scroll: min(scroll, helpMaximumScroll(state)))
        }
    case .tick(let at):
        if state.room.now / 1000 != at / 1000 { _ = reduce(&state.room, .tick(at)) }
        effects += awayForGood(&state)
        effects += refreshStats(&state)
    }
    effects += syncPreview(&state)
    effects += syncMicReport(&state)
    settleSelection(&state)
    refreshAudienceWindow(&state)
    state.revision &+= 1
    return neverTwice(&state, effects)
}

/// Drops a sentence that is the same as the one said just before it, unless the person asked again (a key or a
/// line clears the last one): a screen reader must never read a line twice in a row on its own.
private func neverTwice(_ state: inout AppState, _ effects: [AppEffect]) -> [AppEffect] {
    var kept: [AppEffect] = []
    kept.reserveCapacity(effects.count)
    for effect in effects {
        if case .say(let sentence) = effect {
            if sentence == state.lastSaid { continue }
            state.lastSaid = sentence
        }
        kept.append(effect)
    }
    return kept
}

/// Takes a new window of audience names when the audience, the selection or the screen changed.
func refreshAudienceWindow(_ state: inout AppState) {
    let selected = state.selectionAnchor.flatMap { $0.section == .audience ? $0.index : nil }
    let key = AudienceWindow.Key(
        version: state.sectionsVersion, center: selected ?? 0, width: state.screenWidth, height: state.screenHeight)
    guard state.audienceWindow.key != key else { return }
    let audience = state.room.audience
    let window = RoomScreenMapper.audienceWindow(width: key.width, height: key.height)
    let start = max(0, min(key.center - window, audience.count - 2 * window))
    let end = min(audience.count, start + 2 * window)
    var names: [String] = []
    names.reserveCapacity(max(0, end - start))
    for index in start..<max(start, end) { names.append(audience[index].name) }
    state.audienceWindow = AudienceWindow(start: start, names: names, key: key)
}

// MARK: - Time

extension AppAction {
    /// When it happened, for the actions that carry the time: the reducer moves its clock there before anything
    /// else.
    fileprivate var at: Timestamp? {
        switch self {
        case .key(_, let at), .line(_, let at), .server(_, _, let at), .notice(_, let at), .sessionEnded(_, let at),
            .heard(_, let at):
            at
        case .interrupted(let at), .inputEnded(let at), .tick(let at): at
        case .roles, .microphone, .microphoneMissing, .roundTrip, .preview, .microphoneName, .volumes, .filePlay,
            .resize:
            nil
        }
    }
}

private func advance(_ state: inout AppState, to now: Timestamp) {
    state.now = max(state.now, now)
    if let expires = state.noticeExpires, expires <= state.now {
        state.notice = nil
        state.noticeExpires = nil
    }
    if state.room.now / 1000 != state.now / 1000 { _ = reduce(&state.room, .tick(state.now)) }
    endHeldSpurts(&state)
    // Meters that have fallen silent are dropped, so the map holds only people heard lately.
    if !state.meters.isEmpty {
        let now = state.now
        state.meters = state.meters.filter { $0.value.uiLevel(at: now) > 0 || state.talking[$0.key] != nil }
    }
}

// MARK: - Notices and requests

/// Puts a notice above the status line (for six seconds, or until replaced when not `lasting`), keeps it in the
/// event log (a notice cut short on a narrow screen is read there whole) and says it in line mode. Every notice
/// is said as a sentence (RoomCore words its reasons as clauses, which the server sends as they are).
@discardableResult
func show(_ state: inout AppState, _ shown: Notice, lasting: Bool = true) -> [AppEffect] {
    let notice = shown.asSentence(keeping: state.room.peers.values.map(\.name))
    state.notice = notice
    state.noticeExpires = lasting ? state.now + AppState.noticeLifetime : nil
    state.noticeEndsOnUnmute = false
    // The event pane follows line mode's rule (`neverTwice`): the same sentence again, with nothing asked for
    // in between (a device that fails again as the sound reopens it), renews the notice but is not logged twice.
    if notice.text != state.lastSaid {
        appendLog(&state, .notice(notice.text, isError: notice.kind != .info))
    }
    return [.say(notice.text)]
}

/// Adds a line to the chat and event pane. While the pane is scrolled up the view stays where it is and the
/// line is counted below it.
func appendLog(_ state: inout AppState, _ line: RoomScreenModel.ChatLine) {
    state.log.append(line)
    if state.chatScroll > 0 {
        state.chatScroll = min(state.chatScroll + 1, max(0, state.log.count - 1))
        state.linesBelow += 1
    }
}

/// Runs RoomCore's reducer for a local intent and turns its effects into the app's (a refusal is shown as a
/// sentence, as every notice is).
func request(_ state: inout AppState, _ action: RoomAction) -> [AppEffect] {
    var effects: [AppEffect] = []
    for effect in reduce(&state.room, action) {
        switch effect {
        case .send(let request):
            effects.append(.send(request))
            if case .acceptInvite = request {
                let how = state.lineMode ? "type /unmute" : "press m"
                effects += show(&state, Notice(.info, "Joining the stage muted; \(how) when you want to talk."))
                state.noticeEndsOnUnmute = true
            }
        case .notice(let notice):
            effects += show(&state, notice)
        case .showHelp: state.overlay = .help(scroll: 0)
        case .leave:
            state.leaving = true
            effects.append(.quit)
        }
    }
    return effects
}

extension Refusal {
    var notice: Notice { Notice(.refusal, reason) }
}

extension Notice {
    /// The notice as a sentence: its first letter capitalised, and a full stop unless it ends with one (or `?`,
    /// `!`, or the `…` of a sentence that trails off). A notice that starts with one of `names` keeps it as the
    /// person wrote it ("ana now sounds at 50 % to you.").
    func asSentence(keeping names: [String] = []) -> Notice {
        let startsWithName = names.contains { name in
            guard !name.isEmpty, text.hasPrefix(name) else { return false }
            return text.dropFirst(name.count).first.map { !$0.isLetter } ?? true
        }
        var sentence = startsWithName ? text : Narration.capitalized(text)
        if let last = sentence.last, !".?!…".contains(last) { sentence += "." }
        return Notice(kind, sentence)
    }
}

// MARK: - The end of the session

/// The connection is over for good. Line mode says why and ends; so does the screen when the person was leaving
/// or never got into the room (which is then the program's failure), and when the person gave up while it was
/// reconnecting (a failure too: the room was lost). Otherwise the screen stays up to say why, until the person
/// closes it.
private func endSession(_ state: inout AppState, _ text: String) -> [AppEffect] {
    let gaveUp = state.leaving && state.beforeDrop != nil
    state.sessionOver = true
    if !state.room.hasJoined {
        state.failure = state.leaving ? "Stopped before the room was joined." : text
    } else if gaveUp {
        state.failure = "Gave up reconnecting; you are no longer in the room."
    }
    if state.lineMode || state.leaving || !state.room.hasJoined {
        // "The room has ended: thanks all." was just said; "The room has ended." would say it again. So would
        // "You were removed from the room." after "Ana removed you from the room.": the end was already told.
        let stem = text.hasSuffix(".") ? String(text.dropLast()) : text
        if state.lineMode, state.room.hasJoined, let last = state.lastSaid,
            last.hasPrefix(stem) || (state.room.ending != nil && last == Narration.endingNotice(state.room))
        {
            return [.quit]
        }
        return [.say(text), .quit]
    }
    return show(&state, Notice(.error, text + " Press q to close."), lasting: false)
}
