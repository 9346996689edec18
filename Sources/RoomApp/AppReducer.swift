import AudioCore
import RoomCore
import TermUI

/// Applies one action to the screen's state and returns what the runtime should do.
///
/// Pure and synchronous: time arrives in the actions. Requests go through RoomCore's `reduce`, which checks them
/// against the role table and says why when they are refused; the server's answer changes the room, never this
/// function. After every action the selection is settled on the same person (or near where they were).
public func reduceApp(_ state: inout AppState, _ action: AppAction) -> [AppEffect] {
    var effects: [AppEffect] = []
    switch action {
    case .key(let key, let at):
        advance(&state, to: at)
        effects = handleKey(&state, key)
    case .line(let text, let at):
        advance(&state, to: at)
        effects = runLine(&state, text, plain: true)
    case .server(let event, let seq, let at):
        advance(&state, to: at)
        if case .reconnecting = event { state.roundTripMilliseconds = nil }
        effects = applyServer(&state, event, seq: seq)
    case .roles(let roles):
        if roles != state.room.roles {
            state.room = RoomState(roles: roles)
            state.sectionsVersion &+= 1
            state.meters = [:]
            state.activeSpeaker = nil
        }
    case .notice(let notice, let at):
        advance(&state, to: at)
        effects = show(&state, notice)
    case .sessionEnded(let text, let at):
        advance(&state, to: at)
        state.sessionOver = true
        effects = show(&state, Notice(.error, text), lasting: false)
    case .microphone(let level):
        if state.microphoneLevel == level { return [] }
        state.microphoneLevel = level
    case .roundTrip(let milliseconds):
        if state.roundTripMilliseconds == milliseconds { return [] }
        state.roundTripMilliseconds = milliseconds
    case .volumes(let volumes):
        state.volumes = volumes.compactMapValues { percent in
            let clamped = min(volumeRange.upperBound, max(volumeRange.lowerBound, percent))
            return clamped == 100 ? nil : clamped
        }
    case .resize(let width, let height):
        state.screenWidth = max(0, width)
        state.screenHeight = max(0, height)
        if case .help(let scroll) = state.overlay {
            state.overlay = .help(scroll: min(scroll, helpMaximumScroll(state)))
        }
    case .tick(let at):
        advance(&state, to: at)
        if state.room.now / 1000 != at / 1000 { _ = reduce(&state.room, .tick(at)) }
    }
    settleSelection(&state)
    refreshAudienceWindow(&state)
    state.revision &+= 1
    return effects
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

private func advance(_ state: inout AppState, to now: Timestamp) {
    state.now = max(state.now, now)
    if let expires = state.noticeExpires, expires <= state.now {
        state.notice = nil
        state.noticeExpires = nil
    }
    if state.room.now / 1000 != state.now / 1000 { _ = reduce(&state.room, .tick(state.now)) }
    // Meters that have fallen silent are dropped, so the map holds only people heard lately.
    if !state.meters.isEmpty {
        let now = state.now
        state.meters = state.meters.filter { $0.value.uiLevel(at: now) > 0 || $0.key == state.activeSpeaker }
    }
}

// MARK: - Notices

@discardableResult
private func show(_ state: inout AppState, _ notice: Notice, lasting: Bool = true) -> [AppEffect] {
    state.notice = notice
    state.noticeExpires = lasting ? state.now + AppState.noticeLifetime : nil
    return [.say(notice.text)]
}

/// Runs RoomCore's reducer for a local intent and turns its effects into the app's.
private func request(_ state: inout AppState, _ action: RoomAction) -> [AppEffect] {
    var effects: [AppEffect] = []
    for effect in reduce(&state.room, action) {
        switch effect {
        case .send(let request):
            effects.append(.send(request))
            if case .acceptInvite = request {
                let how = state.lineMode ? "type /unmute" : "press m"
                effects += show(&state, Notice(.info, "Joining the stage muted; \(how) when you want to talk."))
            }
        case .notice(let notice): effects += show(&state, notice)
        case .showHelp: state.overlay = .help(scroll: 0)
        case .leave:
            state.leaving = true
            effects.append(.quit)
        }
    }
    return effects
}

// MARK: - Server events

private func applyServer(_ state: inout AppState, _ event: ServerEvent, seq: UInt64) -> [AppEffect] {
    let before = EventContext(event, in: state)
    var effects = request(&state, .server(event, seq: seq))
    let applied = state.room.ignoredEvents.total == before.ignored
    guard applied else { return effects }
    switch event {
    case .speakers, .chat, .error, .invitedToSpeak, .inviteDeclined, .askedToMute, .reconnecting, .reconnected: break
    default: state.sectionsVersion &+= 1
    }
    switch event {
    case .speakers(let levels):
        updateMeters(&state, levels)
        return effects
    case .chat(let message):
        if !state.chatVisible && message.from != state.room.selfID { state.unreadChat += 1 }
        state.log.append(.message(from: message.fromName, text: message.text, privately: message.to != .everyone))
    case .error(let code, let message):
        // RoomCore already put the server's words up; say them plainly with what to do next.
        effects = show(&state, Notice(.error, Narration.explainError(code: code, message: message)))
        return effects
    case .invitedToSpeak:
        state.invitationAcceptSelected = true
        if case .help = state.overlay { state.overlay = nil }
    case .inviteLink:
        // The link is too long for the notice row: it goes in the event pane, which opens to show it.
        if !state.lineMode {
            state.chatVisible = true
            effects += show(&state, Notice(.info, "Your invite link is in the event pane; Tab hides it."))
        }
    case .removed, .roomEnded, .peerLeft:
        if state.isOver {
            state.overlay = nil
            state.commandLine = nil
            // The sentence below says it; the notice stays on screen with the way out.
            state.notice = Notice(.error, Narration.endingNotice(state.room) + " Press q to close.")
            state.noticeExpires = nil
        }
    default:
        break
    }
    if let sentence = Narration.sentence(for: event, context: before, state: state) {
        if case .chat = event {
            effects.append(.say(sentence.text))
        } else {
            if sentence.logged { state.log.append(.event(sentence.text)) }
            effects.append(.say(sentence.text))
        }
    }
    return effects
}

/// What an event needs from the state before it is applied (names of people who are about to leave).
struct EventContext {
    var ignored: Int
    var subjectName: String?
    var subjectRole: RoleName?
    var hadSnapshot: Bool

    init(_ event: ServerEvent, in state: AppState) {
        ignored = state.room.ignoredEvents.total
        hadSnapshot = state.room.hasJoined
        let subject: PeerID?
        switch event {
        case .peerLeft(let id), .removed(let id, _, _), .roleChanged(let id, _, _): subject = id
        default: subject = nil
        }
        if let subject, let peer = state.room.peers[subject] {
            subjectName = peer.name
            subjectRole = peer.role
        }
    }
}

private func updateMeters(_ state: inout AppState, _ levels: [SpeakerLevel]) {
    let now = state.now
    var loudest: (PeerID, Int)?
    var heard: Set<PeerID> = []
    for entry in levels {
        guard let peer = state.room.peers[entry.peer] else { continue }
        let level = peer.level
        heard.insert(entry.peer)
        var meter = state.meters[entry.peer] ?? LevelBallistics()
        meter.update(dBov: Meters.dBov(uiLevel: level), at: now)
        state.meters[entry.peer] = meter
        if level > 0, !peer.muted, level > (loudest?.1 ?? 0) { loudest = (entry.peer, level) }
    }
    // Peers left out of an update are silent now: their meters fall from where they are.
    for (id, var meter) in state.meters where !heard.contains(id) {
        meter.update(dBov: AudioLevel.silence, at: now)
        state.meters[id] = meter
    }
    state.activeSpeaker = loudest?.0
}

/// Conversions between the UI's 0–100 levels and the -dBov the meters work in.
public enum Meters {
    /// The -dBov value a UI level stands for (the UI maps the top 60 dB onto 0–100).
    public static func dBov(uiLevel: Int) -> UInt8 {
        guard uiLevel > 0 else { return AudioLevel.silence }
        let decibels = Double(AudioLevel.uiRange) * Double(100 - min(100, uiLevel)) / 100
        return UInt8(max(0, min(Double(AudioLevel.silence), decibels.rounded())))
    }

    /// A level rounded to the steps a five-cell bar can show, so a falling meter changes the screen only when a
    /// cell goes out.
    public static func quantized(_ level: Int) -> Int {
        (min(100, max(0, level)) + 12) / 25 * 25
    }
}

// MARK: - Keys

private func handleKey(_ state: inout AppState, _ key: Key) -> [AppEffect] {
    if key == .resize { return [] }
    if state.commandLine != nil { return editCommandLine(&state, key) }
    if state.showsInvitation, state.overlay == nil || isHelp(state.overlay) {
        return answerInvitation(&state, key)
    }
    switch state.overlay {
    case .help(let scroll): return helpKey(&state, key, scroll: scroll)
    case .actions(let peer, let items, let selected): return menuKey(&state, key, peer: peer, items: items, selected)
    case .confirm(let what, let confirmSelected): return confirmKey(&state, key, what, confirmSelected)
    case nil: return mainKey(&state, key)
    }
}

private func isHelp(_ overlay: AppOverlay?) -> Bool {
    if case .help = overlay { return true }
    return false
}

private func mainKey(_ state: inout AppState, _ key: Key) -> [AppEffect] {
    if state.isOver, actsOnRoom(key) {
        return show(&state, Notice(.refusal, endingReason(state.room)))
    }
    switch key {
    case .char("?"), .function(1):
        state.overlay = .help(scroll: 0)
    case .tab:
        state.chatVisible.toggle()
        if state.chatVisible { state.unreadChat = 0 }
    case .char("/"), .char(":"):
        guard case .char(let prompt) = key else { return [] }
        state.commandLine = LineEditor(prompt: prompt, history: state.commandHistory)
    case .char("q"), .ctrl("c"), .ctrl("d"):
        return requestLeave(&state)
    case .escape:
        state.notice = nil
        state.noticeExpires = nil
    case .char("m"):
        return toggleMute(&state)
    case .char(" "):
        return pushToTalk(&state)
    case .char("r"):
        return request(&state, .command(.hand))
    case .up, .down, .left, .right, .char("h"), .char("j"), .char("k"), .char("l"), .home, .end, .pageUp,
        .pageDown:
        moveSelection(&state, key)
    case .enter:
        return openActions(&state)
    case .char("i"):
        return withSelection(&state) { state, peer in request(&state, .request(.invite(peer.id))) }
    case .char("n"):
        return inviteNext(&state)
    case .char("a"):
        return withSelection(&state) { state, peer in request(&state, .command(.move(peer.id, .audience))) }
    case .char("M"):
        return withSelection(&state) { state, peer in request(&state, .command(.mute(peer.id))) }
    case .char("x"):
        return withSelection(&state) { state, peer in askToRemove(&state, peer, reason: nil) }
    case .char("+"), .char("="):
        return withSelection(&state) { state, peer in stepVolume(&state, peer, up: true) }
    case .char("-"):
        return withSelection(&state) { state, peer in stepVolume(&state, peer, up: false) }
    case .char(let c):
        return show(&state, Notice(.refusal, "\(c) does nothing here; press ? for the keys"))
    default:
        break
    }
    return []
}

/// Whether a key in the main view asks something of the room (or opens a way to), rather than only moving
/// around the screen, showing help or leaving.
private func actsOnRoom(_ key: Key) -> Bool {
    switch key {
    case .char("/"), .char(":"), .char("m"), .char(" "), .char("r"), .enter, .char("i"), .char("n"), .char("a"),
        .char("M"), .char("x"):
        return true
    default:
        return false
    }
}

/// Why nothing can be asked of the room any more, in a few words.
private func endingReason(_ room: RoomState) -> String {
    switch room.ending {
    case .removed: "you were removed from this room"
    case .ended: "the room has ended"
    case .left, nil: "you have left this room"
    }
}

private func withSelection(
    _ state: inout AppState, _ body: (inout AppState, Peer) -> [AppEffect]
) -> [AppEffect] {
    guard let id = state.selection, let peer = state.room.peers[id] else {
        return show(&state, Notice(.refusal, "select someone first with the arrow keys"))
    }
    return body(&state, peer)
}

private func requestLeave(_ state: inout AppState) -> [AppEffect] {
    guard let me = state.room.me, !state.isOver else {
        return request(&state, .request(.leave))
    }
    if me.role == .host || state.room.roles.can(me.role, .endRoom) {
        state.overlay = .confirm(.leave, confirmSelected: false)
        return []
    }
    return request(&state, .request(.leave))
}

private func toggleMute(_ state: inout AppState) -> [AppEffect] {
    guard let me = state.room.me else { return request(&state, .request(.setMute(true))) }
    state.lastSpaceAt = nil
    return request(&state, .request(.setMute(!me.muted)))
}

/// How close together two space presses must be to count as one held key (the terminal repeats a held key;
/// it never says when it is let go).
public let pushToTalkRepeatWindow: Timestamp = 600

private func pushToTalk(_ state: inout AppState) -> [AppEffect] {
    if let last = state.lastSpaceAt, state.now - last < pushToTalkRepeatWindow {
        state.lastSpaceAt = state.now
        return []
    }
    guard let me = state.room.me else { return request(&state, .request(.setMute(false))) }
    if !state.room.roles.can(me.role, .publishAudio) {
        return show(&state, state.room.roles.refusal(lacking: .publishAudio).notice)
    }
    state.lastSpaceAt = state.now
    return request(&state, .request(.setMute(!me.muted)))
}

private func inviteNext(_ state: inout AppState) -> [AppEffect] {
    guard let me = state.room.me else { return request(&state, .command(.hand)) }
    guard state.room.roles.can(me.role, .invite) else {
        return show(&state, state.room.roles.refusal(lacking: .invite).notice)
    }
    guard let head = state.room.raisedHands.first else {
        return show(&state, Notice(.info, "no raised hands to invite"))
    }
    return request(&state, .request(.invite(head.id)))
}

private func askToRemove(_ state: inout AppState, _ peer: Peer, reason: String?) -> [AppEffect] {
    guard let me = state.room.me else { return request(&state, .request(.remove(peer.id, reason: reason))) }
    if let refusal = state.room.roles.check(.remove(peer.id, reason: reason), by: me, target: peer) {
        return show(&state, refusal.notice)
    }
    state.overlay = .confirm(.remove(peer.id, reason: reason), confirmSelected: false)
    return []
}

extension Refusal {
    var notice: Notice { Notice(.refusal, reason) }
}

// MARK: - Volume

/// The local volumes a person may choose, in percent.
public let volumeRange = 0...200
/// How far `+` and `-` move a volume, in percent.
public let volumeStep = 10

/// `+`/`-` on the selected person: the next multiple of ten up or down, for people on the stage.
private func stepVolume(_ state: inout AppState, _ peer: Peer, up: Bool) -> [AppEffect] {
    if peer.id == state.room.selfID {
        return show(&state, Notice(.refusal, "you do not hear yourself; + and - turn others up or down for you"))
    }
    guard state.room.roles.isOnStage(peer.role) else {
        let command = "/volume \(commandName(for: peer, in: state)) PERCENT"
        return show(
            &state, Notice(.refusal, "\(peer.name) is not on the stage; to set their volume for later, type \(command)")
        )
    }
    let current = state.volumes[peer.id] ?? 100
    let next =
        up
        ? min(volumeRange.upperBound, (current / volumeStep + 1) * volumeStep)
        : max(volumeRange.lowerBound, ((current + volumeStep - 1) / volumeStep - 1) * volumeStep)
    if next == current {
        let limit = up ? "already as loud as it goes" : "already silent"
        return show(&state, Notice(.info, "\(peer.name) is \(limit) for you (\(current) %)."))
    }
    return setVolume(&state, peer, next)
}

private func setVolume(_ state: inout AppState, _ peer: Peer, _ percent: Int) -> [AppEffect] {
    state.volumes[peer.id] = percent == 100 ? nil : percent
    let silent = percent == 0 ? " (silent)" : ""
    return [.setVolume(peer.id, percent: percent)]
        + show(&state, Notice(.info, "\(peer.name) now sounds at \(percent) % to you\(silent)."))
}

/// `/volume NAME [PERCENT]`: sets a volume, or says what it is. Anyone but yourself, on stage or not, so a
/// volume can be chosen before someone speaks.
private func volumeCommand(_ state: inout AppState, _ id: PeerID, percent: Int?) -> [AppEffect] {
    guard let peer = state.room.peers[id] else {
        return show(&state, Notice(.refusal, "that person has left the room"))
    }
    if id == state.room.selfID {
        return show(&state, Notice(.refusal, "you do not hear yourself; /volume sets how loud others sound to you"))
    }
    guard let percent else {
        let current = state.volumes[id] ?? 100
        return show(&state, Notice(.info, "\(peer.name) sounds at \(current) % to you."))
    }
    return setVolume(&state, peer, percent)
}

/// How to name `peer` on the command line: the display name when it is unique and has no quote or space in
/// the way, else the identity.
private func commandName(for peer: Peer, in state: AppState) -> String {
    let exact = state.room.peers.values.filter { $0.name.lowercased() == peer.name.lowercased() }.count == 1
    let name = exact ? peer.name : peer.id.rawValue
    return name.contains(" ") || name.contains("\"") ? "\"" + name.replacingQuotes() + "\"" : name
}

// MARK: - Overlays

func helpMaximumScroll(_ state: AppState) -> Int {
    HelpOverlay.maximumScroll(height: max(0, state.screenHeight - 3), glyphs: .unicode)
}

private func helpKey(_ state: inout AppState, _ key: Key, scroll: Int) -> [AppEffect] {
    let limit = helpMaximumScroll(state)
    switch key {
    case .char("?"), .escape, .char("q"), .enter, .function(1): state.overlay = nil
    case .ctrl("c"):
        state.overlay = nil
        return requestLeave(&state)
    case .down, .char("j"): state.overlay = .help(scroll: min(limit, scroll + 1))
    case .up, .char("k"): state.overlay = .help(scroll: max(0, scroll - 1))
    case .pageDown, .char(" "): state.overlay = .help(scroll: min(limit, scroll + 10))
    case .pageUp: state.overlay = .help(scroll: max(0, scroll - 10))
    default: break
    }
    return []
}

private func answerInvitation(_ state: inout AppState, _ key: Key) -> [AppEffect] {
    switch key {
    case .char("a"), .char("y"):
        state.overlay = nil
        return request(&state, .request(.acceptInvite))
    case .char("d"), .char("n"), .escape:
        state.overlay = nil
        return request(&state, .request(.declineInvite))
    case .left, .right, .char("h"), .char("l"), .tab, .backTab:
        state.invitationAcceptSelected.toggle()
    case .enter:
        state.overlay = nil
        return request(&state, .request(state.invitationAcceptSelected ? .acceptInvite : .declineInvite))
    case .ctrl("c"), .char("q"):
        return requestLeave(&state)
    case .char("?"):
        state.overlay = isHelp(state.overlay) ? nil : .help(scroll: 0)
    default:
        return show(&state, Notice(.info, "answer the invitation first: a accepts, d declines"))
    }
    return []
}

private func menuKey(
    _ state: inout AppState, _ key: Key, peer: PeerID, items: [PeerAction], _ selected: Int
) -> [AppEffect] {
    switch key {
    case .escape, .char("q"), .left, .char("h"):
        state.overlay = nil
    case .ctrl("c"):
        state.overlay = nil
        return requestLeave(&state)
    case .down, .char("j"), .tab:
        state.overlay = .actions(peer: peer, items: items, selected: (selected + 1) % max(1, items.count))
    case .up, .char("k"), .backTab:
        state.overlay = .actions(
            peer: peer, items: items, selected: (selected + items.count - 1) % max(1, items.count))
    case .enter, .right:
        state.overlay = nil
        guard items.indices.contains(selected) else { return [] }
        return perform(&state, items[selected], on: peer)
    case .char(let c):
        guard let item = items.first(where: { $0.key == String(c) }) else { return [] }
        state.overlay = nil
        return perform(&state, item, on: peer)
    default:
        break
    }
    return []
}

private func perform(_ state: inout AppState, _ action: PeerAction, on id: PeerID) -> [AppEffect] {
    guard let peer = state.room.peers[id] else {
        return show(&state, Notice(.refusal, "that person has left the room"))
    }
    switch action {
    case .invite: return request(&state, .request(.invite(id)))
    case .makeSpeaker: return request(&state, .command(.move(id, .speaker)))
    case .makeModerator: return request(&state, .command(.move(id, .moderator)))
    case .moveToAudience: return request(&state, .command(.move(id, .audience)))
    case .lowerHand: return request(&state, .request(.lowerHand))
    case .mute: return request(&state, .command(.mute(id)))
    case .remove: return askToRemove(&state, peer, reason: nil)
    case .message:
        let quoted = commandName(for: peer, in: state)
        state.commandLine = LineEditor(prompt: "/", text: "dm \(quoted) ", history: state.commandHistory)
        return []
    }
}

extension String {
    fileprivate func replacingQuotes() -> String {
        var result = ""
        for c in self {
            if c == "\"" || c == "\\" { result.append("\\") }
            result.append(c)
        }
        return result
    }
}

/// The actions the person may take on `peer`, in menu order.
public func availableActions(_ state: AppState, on peer: Peer) -> [PeerAction] {
    guard let me = state.room.me, !state.isOver else { return [] }
    let roles = state.room.roles
    let isMe = peer.id == me.id
    var items: [PeerAction] = []
    func allowed(_ request: ClientRequest) -> Bool { roles.check(request, by: me, target: peer) == nil }
    if !roles.isOnStage(peer.role), allowed(.invite(peer.id)) { items.append(.invite) }
    if !isMe, peer.role != .speaker, roles.contains(.speaker), allowed(.setRole(peer.id, .speaker)) {
        items.append(.makeSpeaker)
    }
    if !isMe, peer.role != .moderator, roles.contains(.moderator), allowed(.setRole(peer.id, .moderator)) {
        items.append(.makeModerator)
    }
    if roles.isOnStage(peer.role) && (isMe || allowed(.setRole(peer.id, .audience))) { items.append(.moveToAudience) }
    if isMe, peer.handRaisedAt != nil { items.append(.lowerHand) }
    if roles.isOnStage(peer.role), !peer.muted, isMe || allowed(.mutePeer(peer.id)) { items.append(.mute) }
    if !isMe, allowed(.remove(peer.id, reason: nil)) { items.append(.remove) }
    if !isMe, roles.can(me.role, .chat) { items.append(.message) }
    return items
}

private func openActions(_ state: inout AppState) -> [AppEffect] {
    withSelection(&state) { state, peer in
        let items = availableActions(state, on: peer)
        guard !items.isEmpty else {
            return show(&state, Notice(.info, "there is nothing you can do for \(peer.name) here"))
        }
        state.overlay = .actions(peer: peer.id, items: items, selected: 0)
        return []
    }
}

private func confirmKey(
    _ state: inout AppState, _ key: Key, _ what: Confirmable, _ confirmSelected: Bool
) -> [AppEffect] {
    switch key {
    case .left, .right, .char("h"), .char("l"), .tab, .backTab:
        state.overlay = .confirm(what, confirmSelected: !confirmSelected)
    case .escape, .char("n"), .ctrl("c"):
        state.overlay = nil
    case .char("y"):
        state.overlay = nil
        return carryOut(&state, what)
    case .enter:
        state.overlay = nil
        return confirmSelected ? carryOut(&state, what) : []
    case .char("q") where what == .leave:
        state.overlay = nil
        return carryOut(&state, what)
    default:
        break
    }
    return []
}

private func carryOut(_ state: inout AppState, _ what: Confirmable) -> [AppEffect] {
    switch what {
    case .remove(let id, let reason): return request(&state, .command(.remove(id, reason: reason)))
    case .endRoom(let reason): return request(&state, .command(.end(reason: reason)))
    case .leave: return request(&state, .request(.leave))
    }
}

/// The question a confirmation asks, in plain words.
public func confirmationText(_ what: Confirmable, in state: AppState) -> RoomScreenModel.Confirmation {
    switch what {
    case .remove(let id, _):
        let name = state.room.peers[id]?.name ?? id.rawValue
        return RoomScreenModel.Confirmation(
            title: "Remove \(name)?",
            message: "\(name) is disconnected now and cannot come back while the room stays open.",
            confirmLabel: "Remove")
    case .endRoom:
        return RoomScreenModel.Confirmation(
            title: "End the room?",
            message: "Everyone is disconnected and the room closes for good. This cannot be undone.",
            confirmLabel: "End room")
    case .leave:
        return RoomScreenModel.Confirmation(
            title: "Leave the room?",
            message: "You are a host. The room goes on without you; to close it for everyone, use /end instead.",
            confirmLabel: "Leave")
    }
}

// MARK: - The command line

private func editCommandLine(_ state: inout AppState, _ key: Key) -> [AppEffect] {
    guard var editor = state.commandLine else { return [] }
    let outcome = editor.handle(key)
    switch outcome {
    case .editing, .ignored:
        state.commandLine = editor
        return []
    case .cancelled:
        state.commandHistory = editor.history
        state.commandLine = nil
        return []
    case .submitted(let text):
        state.commandHistory = editor.history
        state.commandLine = nil
        if text.allSatisfy(\.isWhitespace) { return [] }
        let words = text.split(separator: " ", maxSplits: 1)
        let first = words.first.map { $0.lowercased() } ?? ""
        // A line that starts with a command's name is that command; anything else is chat.
        let isCommand = text.hasPrefix("/") || commandNames.contains(first)
        return runLine(&state, isCommand ? (text.hasPrefix("/") ? text : "/" + text) : text, plain: false)
    }
}

/// Commands the command line knows: RoomCore's grammar plus the client's own.
let commandNames: Set<String> = Set(Command.usages.map(\.name)).union(clientCommands.map(\.name))

/// Commands handled by the client itself, not by RoomCore's grammar.
public let clientCommands: [(name: String, usage: String, summary: String)] = [
    ("accept", "/accept", "accept an invitation to speak"),
    ("decline", "/decline", "decline an invitation to speak"),
    ("mute", "/mute", "mute yourself (with a NAME: mute someone)"),
    ("unmute", "/unmute", "unmute yourself"),
    ("leave", "/leave", "leave the room"),
    ("who", "/who", "say who is on stage and how many listen"),
]

/// Runs a typed line: a `/command`, or chat. `plain` is line mode, where there are no dialogs to confirm in.
func runLine(_ state: inout AppState, _ text: String, plain: Bool) -> [AppEffect] {
    let trimmed = text.trimmingCharacters()
    if trimmed.isEmpty { return [] }
    if trimmed.hasPrefix("/") && !trimmed.hasPrefix("//") {
        let body = trimmed.dropFirst()
        let parts = body.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        let name = parts.first.map { $0.lowercased() } ?? ""
        let hasArgument = parts.count > 1
        switch (name, hasArgument) {
        case ("accept", false): return request(&state, .request(.acceptInvite))
        case ("decline", false): return request(&state, .request(.declineInvite))
        case ("mute", false): return request(&state, .request(.setMute(true)))
        case ("unmute", false): return request(&state, .request(.setMute(false)))
        case ("leave", false), ("quit", false):
            return plain ? request(&state, .request(.leave)) : requestLeave(&state)
        case ("who", false): return show(&state, Notice(.info, Narration.who(state)))
        default: break
        }
    }
    switch Command.parse(trimmed, peers: state.room.peers.values, roles: state.room.roles) {
    case .failure(let error):
        return show(&state, Notice(.refusal, error.description))
    case .success(.end(let reason)) where !plain:
        if let me = state.room.me, !state.isOver,
            let refusal = state.room.roles.check(
                .endRoom(reason: reason), by: me, target: nil)
        {
            return show(&state, refusal.notice)
        }
        if state.room.me == nil || state.isOver { return request(&state, .command(.end(reason: reason))) }
        state.overlay = .confirm(.endRoom(reason: reason), confirmSelected: false)
        return []
    case .success(.volume(let id, let percent)):
        return volumeCommand(&state, id, percent: percent)
    case .success(.help):
        if plain { return [.say(Narration.plainHelp)] }
        state.overlay = .help(scroll: 0)
        return []
    case .success(let command):
        return request(&state, .command(command))
    }
}

extension String {
    func trimmingCharacters() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
