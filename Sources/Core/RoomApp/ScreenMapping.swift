import AudioCore
import RoomCore
import TermUI

/// Turns the room and screen state into what the room screen shows.
public enum RoomScreenMapper {
    /// How many audience names are given on each side of the selection: as many as the screen could show at
    /// once (the narrowest column is 8 wide), since the selection may sit anywhere in the visible rows. A window
    /// keeps the cost of a frame independent of the audience's size.
    public static func audienceWindow(width: Int, height: Int) -> Int {
        max(64, (max(0, width) / 8 + 1) * max(1, height))
    }
    /// The most raised hands listed.
    public static let handsListed = 2000
    /// The most chat and event lines handed to the pane (it shows the newest that fit).
    public static let chatLines = 200

    /// The screen model for `state` at its own clock.
    public static func model(_ state: AppState) -> RoomScreenModel {
        let room = state.room
        let now = state.now
        var model = RoomScreenModel(header: header(state), status: status(state))
        model.stage = stageEntries(state)
        if state.seesWholeQueue {
            var entries: [RoomScreenModel.HandEntry] = []
            entries.reserveCapacity(min(room.raisedHands.count, handsListed))
            for (index, peer) in room.raisedHands.prefix(handsListed).enumerated() {
                let waited = peer.waitingTime(now: now).map { Int($0 / 1000) } ?? 0
                entries.append(
                    .init(
                        position: index + 1, name: peer.name, waitingSeconds: waited,
                        invited: room.invitations[peer.id] != nil))
            }
            model.hands = .full(entries)
            model.invitations = invitationEntries(state)
        } else {
            let mine = room.selfID.flatMap { room.queuePosition(of: $0) }
            model.hands = .ownPlace(position: mine, total: room.raisedHands.count)
        }
        model.audience = state.audienceWindow.names
        if !room.reactions.isEmpty {
            // A reaction shows after the name for a few seconds; only then is the window's list copied.
            let start = state.audienceWindow.start
            for index in model.audience.indices where start + index < room.audience.count {
                let peer = room.audience[start + index]
                if let mark = room.reactionMark(of: peer.id) {
                    model.audience[index] += " " + mark.symbol(ascii: state.ascii)
                }
            }
        }
        model.audienceOffset = state.audienceWindow.start
        model.audienceCount = room.audience.count
        model.chat = Array(state.log.suffix(chatLines + state.chatScroll))
        model.chatVisible = state.chatVisible
        model.chatScroll = state.chatScroll
        model.linesBelow = state.linesBelow
        if let anchor = state.selectionAnchor, state.selection != nil {
            switch anchor.section {
            case .stage: model.selection = .stage(anchor.index)
            case .raisedHands: model.selection = state.seesWholeQueue ? .hand(anchor.index) : .none
            case .audience: model.selection = .audience(anchor.index)
            }
        }
        model.notice = notice(state)
        model.commandLine = state.commandLine
        model.overlay = overlay(state)
        sayOnce(&model, state)
        return model
    }

    /// What stands on the notice row is said there only: the event pane leaves out its copy while it stands
    /// (the copy shows in its place once the notice goes), and an invitation dialog that says why the microphone
    /// cannot open takes the place of the same words on the notice row.
    static func sayOnce(_ model: inout RoomScreenModel, _ state: AppState) {
        guard let notice = model.notice else { return }
        if case .invitation(let invitation) = model.overlay, invitation.micProblem == notice.text {
            model.notice = nil
            return
        }
        guard state.chatScroll == 0,
            let copy = model.chat.lastIndex(where: {
                if case .notice(let text, _) = $0 { text == notice.text } else { false }
            })
        else { return }
        model.chat.remove(at: copy)
    }

    static func header(_ state: AppState) -> RoomScreenModel.Header {
        let room = state.room
        let connection: RoomScreenModel.Connection
        if room.ending != nil || state.sessionOver {
            connection = .disconnected
        } else {
            switch room.connection {
            case .connecting: connection = .connecting
            case .connected: connection = .connected(roundTripMilliseconds: state.roundTripMilliseconds)
            case .reconnecting(let attempt, _): connection = .reconnecting(attempt: attempt)
            }
        }
        return RoomScreenModel.Header(
            room: room.roomID.isEmpty ? "joining" : room.roomID, topic: room.topic, peopleCount: room.peopleCount,
            connection: connection, recording: room.recording != nil, streaming: room.streaming != nil)
    }

    /// The screen's role for a room role: the four standard ones by name, others by whether they are on stage.
    public static func displayRole(_ role: RoleName, roles: RoleTable) -> RoomScreenModel.Role {
        switch role {
        case .host: return .host
        case .moderator: return .moderator
        case .speaker: return .speaker
        case .audience: return .audience
        default: return roles.isOnStage(role) ? .speaker : .audience
        }
    }

    /// The pending invitations, oldest first, with who sent each and how long ago.
    static func invitationEntries(_ state: AppState) -> [RoomScreenModel.InvitationEntry] {
        let room = state.room
        return room.invitations.sorted { ($0.value.at, $0.key) < ($1.value.at, $1.key) }.compactMap { id, invitation in
            guard let peer = room.peers[id] else { return nil }
            let by = invitation.by == room.selfID ? "you" : room.inviterName(invitation.by)
            return .init(name: peer.name, by: by, seconds: Int(max(0, state.now - invitation.at) / 1000))
        }
    }

    static func stageEntries(_ state: AppState) -> [RoomScreenModel.StageEntry] {
        let room = state.room
        var entries: [RoomScreenModel.StageEntry] = []
        entries.reserveCapacity(room.stage.count)
        // Hosts and moderators (who may move people off the stage) see whose connection is poor.
        let marksPoor = room.me.map { room.roles.can($0.role, .move) } ?? false
        for peer in room.stage {
            let quality = room.quality[peer.id]
            let spurt = peer.muted ? nil : state.talking[peer.id]
            entries.append(
                .init(
                    name: peer.name, role: displayRole(peer.role, roles: room.roles), muted: peer.muted,
                    level: shownLevel(peer.id, state, at: state.now), speaking: spurt != nil,
                    volume: state.volumes[peer.id], signal: quality?.score,
                    poor: marksPoor && quality?.isPoor == true,
                    micFailed: !peer.micWorking || (peer.id == room.selfID && state.microphoneMissing),
                    playing: peer.playing,
                    reaction: room.reactionMark(of: peer.id)?.symbol(ascii: state.ascii)))
        }
        return entries
    }

    /// The level a stage entry's bar shows at `time`: the meter's, or while the person talks at least their level
    /// now (a steady talker's bar stays up: the level reports come only when it changes); in the bar's steps.
    static func shownLevel(_ id: PeerID, _ state: AppState, at time: Timestamp) -> Int {
        var level = state.meters[id].map { $0.uiLevel(at: time) } ?? 0
        if let spurt = state.talking[id], state.room.peers[id]?.muted == false { level = max(level, spurt.level) }
        return Meters.quantized(level)
    }

    /// Who the person is, and the hints of the key table that apply to them now.
    static func status(_ state: AppState) -> RoomScreenModel.StatusLine {
        var status: RoomScreenModel.StatusLine
        if let me = state.room.me {
            let roles = state.room.roles
            status = .init(
                name: me.name, role: displayRole(me.role, roles: roles),
                micMuted: roles.isOnStage(me.role) ? me.muted : nil,
                micMissing: roles.isOnStage(me.role) && state.microphoneMissing, handRaised: me.handRaisedAt != nil,
                roomOver: state.isOver)
        } else {
            status = .init(name: "", role: .audience, roomOver: state.isOver)
        }
        status.handsOff = !state.room.handsAllowed
        if case .reconnecting = state.room.connection, !state.sessionOver { status.reconnecting = true }
        status.alert = state.alert
        status.signal = state.room.selfID.flatMap { state.room.quality[$0]?.score }
        status.playing = state.playing?.progress
        status.hints = KeyBindings.hints(for: status, unreadChat: state.chatVisible ? 0 : state.unreadChat)
        return status
    }

    static func notice(_ state: AppState) -> RoomScreenModel.Notice? {
        // While the connection is down, that is what matters: one status that counts down to the next try.
        if case .reconnecting(let attempt, let retryAt) = state.room.connection, !state.sessionOver,
            state.room.ending == nil
        {
            return .init(
                reconnectingNotice(attempt: attempt, retryAt: retryAt, now: state.now, droppedAt: state.droppedAt),
                isError: true)
        }
        if let notice = state.notice { return .init(notice.text, isError: notice.kind != .info) }
        if state.room.ending != nil {
            return .init(Narration.endingNotice(state.room) + " Press q to close.", isError: true)
        }
        if state.room.muteRequestedBy != nil, let by = state.room.muteRequestedBy {
            let name = state.room.peers[by]?.name ?? by.rawValue
            return .init("\(name) asks you to mute; press m to mute.")
        }
        return nil
    }

    /// The standing notice while the connection is down: which try, when the next is, and what the keys do.
    static func reconnectingNotice(attempt: Int, retryAt: Timestamp, now: Timestamp, droppedAt: Timestamp?) -> String {
        let wait = retryAt > now ? " in \((retryAt - now + 999) / 1000)\u{A0}s" : " now"
        return "Connection lost; next try\(wait) (try \(attempt)). Ctrl-R tries now, q gives up; "
            + Narration.placeKeptFor(droppedAt: droppedAt, now: now) + "."
    }

    static func overlay(_ state: AppState) -> RoomScreenModel.Overlay? {
        if state.showsInvitation, let invitation = state.room.invitation, !isHelpOpen(state) {
            // It starts the prompt's sentence.
            let from = state.room.peers[invitation.by]?.name ?? "Someone who has left"
            var level: Int?
            var problem: String?
            switch state.preview {
            case .level(let value): level = value
            case .unavailable(let why): problem = why
            case nil: level = state.microphoneLevel
            }
            problem = previewProblem(state) ?? problem
            let left = invitation.at > 0 ? Int(max(0, invitation.at + Invitation.lifetime - state.now) / 1000) : nil
            return .invitation(
                .init(
                    from: from, micName: state.microphoneName, micLevel: level, micProblem: problem, secondsLeft: left,
                    acceptSelected: state.invitationAcceptSelected, recorded: state.room.recording != nil,
                    streamed: state.room.streaming != nil))
        }
        switch state.overlay {
        case nil: return nil
        case .help(let scroll):
            return .help(lines: shownHelpLines(state), scroll: scroll)
        case .actions(let peer, let items, let selected):
            let name = peer == state.room.selfID ? "You" : state.room.peers[peer]?.name ?? peer.rawValue
            let roles = state.room.roles
            let menu = items.map {
                KeyHint($0.key, state.glyphs.plain($0.title(roles, stepUp: state.room.stepUpRole)))
            }
            return .actions(.init(peerName: name, items: menu, selected: selected))
        case .confirm(let what, let confirmSelected):
            var confirmation = confirmationText(what, in: state)
            confirmation.confirmSelected = confirmSelected
            return .confirmation(confirmation)
        case .stats(let people, _):
            return .stats(SpeakingTable(rows: people.map { $0.map(SpeakingTable.Row.init) }))
        }
    }

    private static func isHelpOpen(_ state: AppState) -> Bool {
        if case .help = state.overlay { return true }
        return false
    }

    /// When the screen must be drawn again with nothing else happening: a notice goes away, a level bar falls a
    /// step, or a waiting time ticks over a second. `nil` when the screen stays as it is until the next event.
    public static func nextWakeup(_ state: AppState) -> Timestamp? {
        let now = state.now
        var next: Timestamp?
        func consider(_ time: Timestamp) { next = min(next ?? time, time) }
        if let expires = state.noticeExpires { consider(expires) }
        if let away = state.awayEnds { consider(away) }
        // A reaction's mark goes when its time is up.
        if let expiry = state.room.reactions.nextExpiry { consider(expiry) }
        // A held pause ends a talker's highlight; a countdown to the next try ticks each second.
        for (id, spurt) in state.talking where !state.heardPeers.contains(id) && spurt.level == 0 {
            consider(spurt.lastHeard + talkHold)
        }
        if case .reconnecting(_, let retryAt) = state.room.connection, retryAt > now {
            consider(now + (retryAt - now) % 1000 + 1)
        }
        if let invitation = state.room.invitation, state.showsInvitation, invitation.at > 0 {
            consider(now + 1000 - (now - invitation.at) % 1000)
        }
        for id in state.meters.keys where state.room.section(of: id) == .stage {
            let shown = shownLevel(id, state, at: now)
            guard shown > 0 else { continue }
            // A meter holds, then falls steadily, so what it shows only goes down until the next update: search
            // for the first millisecond its bar loses a cell, and wake on the frame boundary at or after it.
            var low = now
            var high = now + 10_000
            guard shownLevel(id, state, at: high) != shown else { continue }
            while high - low > 1 {
                let mid = low + (high - low) / 2
                if shownLevel(id, state, at: mid) == shown { low = mid } else { high = mid }
            }
            consider(now + ((high - now + frameInterval - 1) / frameInterval) * frameInterval)
        }
        if state.seesWholeQueue, let head = state.room.raisedHands.first, let raised = head.handRaisedAt {
            consider(now + 1000 - (now - raised) % 1000)
        }
        if state.seesWholeQueue, let oldest = state.room.invitations.values.map(\.at).min() {
            consider(now + 1000 - (now - oldest) % 1000)
        }
        // The speaking-time panel asks again while open (`refreshStats`), but not while the connection is down:
        // the countdown to the next try wakes the screen then.
        if case .stats(_, let askedAt) = state.overlay, state.room.connection == .connected {
            consider(askedAt + statsRefreshInterval)
        }
        return next
    }

    /// The shortest time between two frames: at most 30 a second.
    public static let frameInterval: Timestamp = 34
}

extension RoomState {
    /// Who sent an invitation that is still pending, by name: its sender may have left the room since, and an
    /// identity means nothing to the person reading it.
    func inviterName(_ id: PeerID) -> String { peers[id]?.name ?? "someone who has left" }
}
