import RoomApp
import RoomCore
import RoomTesting
import TermUI
import Testing

/// Whole screens drawn from room state through the reducer and the mapping, compared with text goldens.
@Suite struct GoldenTests {
    /// The sketch room with levels: Ana talking loudly, Chen softly.
    func talking(as me: String, ascii: Bool = false, width: Int = 80, height: Int = 24) -> AppState {
        var state = joined(as: me, ascii: ascii, width: width, height: height)
        let levels = [SpeakerLevel(peer: "ana", level: 90), SpeakerLevel(peer: "chen", level: 40)]
        send(&state, .server(.speakers(levels), seq: 11, at: t0))
        return state
    }

    @Test func moderatorSeesTheWholeQueue() {
        expectGolden("moderator-80x24", render(talking(as: "bo")))
    }

    @Test func listenerSeesTheirPlaceInTheQueue() {
        expectGolden("listener-hand-80x24", render(talking(as: "fay")))
    }

    @Test func selectionInTheQueueAndTheActionsMenu() {
        var state = talking(as: "bo")
        send(&state, key(.down), key(.down), char("l"), key(.enter))
        expectGolden("actions-menu-80x24", render(state))
    }

    @Test func invitationPrompt() {
        var state = talking(as: "hana")
        send(&state, .server(.invited("hana", by: "bo", at: t0), seq: 12, at: t0), .microphone(level: 60))
        expectGolden("invitation-80x24", render(state))
    }

    @Test func confirmRemove() {
        var state = talking(as: "ana")
        send(&state, key(.end), char("x"))
        expectGolden("confirm-remove-80x24", render(state))
    }

    @Test func helpAtFortyByTwelve() {
        var state = talking(as: "hana", width: 40, height: 12)
        send(&state, char("?"))
        expectGolden("help-40x12", render(state, width: 40, height: 12))
    }

    @Test func smallScreen() {
        expectGolden("moderator-40x12", render(talking(as: "bo", width: 40, height: 12), width: 40, height: 12))
    }

    /// Ana turned down to 70 %, Chen up to 150 %, Dara silenced: the stage shows each beside the microphone.
    func withVolumes(_ state: AppState) -> AppState {
        var state = state
        send(&state, .volumes(["ana": 70, "chen": 150, "dara": 0]))
        return state
    }

    @Test func volumesOnTheStage() {
        expectGolden("volumes-80x24", render(withVolumes(talking(as: "bo"))))
        expectGolden(
            "volumes-40x12", render(withVolumes(talking(as: "bo", width: 40, height: 12)), width: 40, height: 12))
        expectGolden(
            "volumes-ascii-40x12",
            render(withVolumes(talking(as: "bo", ascii: true, width: 40, height: 12)), width: 40, height: 12))
    }

    @Test func asciiOnly() {
        expectGolden("ascii-80x24", render(talking(as: "bo", ascii: true)))
    }

    @Test func chatPaneWithEventsAndARefusal() {
        var state = talking(as: "hana")
        send(
            &state,
            .server(
                .chat(ChatMessage(from: "eli", fromName: "Eli", text: "hello from the queue", sentAt: t0)), seq: 12,
                at: t0),
            .server(.roleChanged("eli", to: .speaker, by: "bo"), seq: 13, at: t0),
            .server(.peerJoined(peer("kai", "Kai")), seq: 14, at: t0),
            char("n"))
        expectGolden("chat-refusal-80x24", render(state))
    }

    /// The inviter and every moderator see pending invitations at once: who, by whom, how long; an invited hand
    /// shows "invited" in place of its waiting time.
    @Test func pendingInvitationsShowInTheQueue() {
        var state = talking(as: "bo")
        send(
            &state, .server(.invited("eli", by: "bo", at: t0 - 12_000), seq: 12, at: t0),
            .server(.invited("hana", by: "ana", at: t0 - 63_000), seq: 13, at: t0))
        expectGolden("invitations-80x24", render(state))
        var narrow = talking(as: "bo", width: 40, height: 12)
        send(&narrow, .server(.invited("eli", by: "bo", at: t0 - 12_000), seq: 12, at: t0))
        expectGolden("invitations-40x12", render(narrow, width: 40, height: 12))
    }

    /// Your own menu holds only what you do to yourself; stepping down asks first.
    @Test func yourOwnMenuAndTheStepDownQuestion() {
        var state = talking(as: "ana")
        send(&state, .server(.muteChanged("ana", muted: false, by: "ana"), seq: 12, at: t0), key(.enter))
        expectGolden("own-menu-80x24", render(state))
        send(&state, char("a"))
        expectGolden("step-down-80x24", render(state))
    }

    /// While the connection is down: one standing status counting down to the next try, with the keys.
    @Test func reconnectingCountsDownToTheNextTry() {
        var state = talking(as: "bo", width: 40, height: 12)
        send(&state, .server(.reconnecting(attempt: 3, retryAt: t0 + 4_200), seq: 0, at: t0))
        expectGolden("reconnecting-40x12", render(state, width: 40, height: 12))
    }

    /// A direct message marks the status line (after the microphone) until a key is pressed; the pane says where
    /// messages went.
    @Test func aDirectMessageMarksTheStatusLine() {
        var state = talking(as: "hana")
        send(
            &state,
            .server(
                .chat(ChatMessage(from: "bo", fromName: "Bo", text: "you're next", to: .peer("hana"), sentAt: t0)),
                seq: 12, at: t0),
            .server(
                .chat(ChatMessage(from: "ana", fromName: "Ana", text: "two minutes", to: .role(.speaker), sentAt: t0)),
                seq: 13, at: t0))
        expectGolden("direct-message-80x24", render(state))
    }

    /// Scrolled up, the pane keeps its place and counts the lines that arrived below.
    @Test func theChatPaneScrollsAndCountsWhatArrives() {
        var state = talking(as: "hana")
        for index in 0..<30 {
            let message = ChatMessage(from: "eli", fromName: "Eli", text: "message \(index)", sentAt: t0)
            send(&state, .server(.chat(message), seq: UInt64(12 + index), at: t0))
        }
        send(&state, key(.pageUp))
        for index in 30..<33 {
            let message = ChatMessage(from: "eli", fromName: "Eli", text: "message \(index)", sentAt: t0)
            send(&state, .server(.chat(message), seq: UInt64(12 + index), at: t0))
        }
        expectGolden("chat-scrolled-80x24", render(state))
    }

    /// At 40x12 a notice too long for one row takes two, and stays whole in the event log.
    @Test func aLongNoticeAtFortyByTwelve() {
        var state = talking(as: "hana", width: 40, height: 12)
        send(&state, char("n"))
        expectGolden("notice-40x12", render(state, width: 40, height: 12))
    }

    /// In ASCII, program text is ASCII too: curly quotes, dashes and ellipses from other parts become their
    /// ASCII spellings.
    @Test func asciiNoticesHaveNoCurlyQuotes() {
        var state = talking(as: "bo", ascii: true)
        send(&state, .notice(Notice(.error, "No speaker (“default” not found) — using “null”…"), at: t0))
        let screen = render(state).lines().joined(separator: "\n")
        #expect(!screen.contains("“") && !screen.contains("”") && !screen.contains("—") && !screen.contains("…"))
        expectGolden("ascii-notice-80x24", render(state))
    }

    @Test func twoThousandListenersScrolledToTheMiddle() {
        var peers = sketchPeers()
        for index in 0..<2000 { peers.append(peer("l\(index)", "Listener \(index)")) }
        var state = joined(as: "bo", peers: peers)
        send(&state, key(.end))
        for _ in 0..<300 { send(&state, key(.up)) }
        expectGolden("audience-2000-80x24", render(state))
    }

    @Test func removedFromTheRoom() {
        var state = talking(as: "hana")
        send(&state, .server(.removed("hana", reason: "off topic", by: "bo"), seq: 12, at: t0))
        expectGolden("removed-80x24", render(state))
    }

    @Test func reconnecting() {
        var state = talking(as: "bo")
        send(&state, .server(.reconnecting(attempt: 2), seq: 0, at: t0))
        expectGolden("reconnecting-80x24", render(state))
    }

    @Test func wideNamesLineUp() {
        let peers = [
            peer("ana", "Ana", .host, muted: false), peer("li", "李雷", .speaker, muted: false),
            peer("han", "韩梅梅", .speaker), peer("sam", "🎧 Sam", hand: t0 - 5000), peer("jose", "José"),
            peer("olga", "Ольга"), peer("taro", "山田太郎さん"),
        ]
        expectGolden("wide-names-80x24", render(joined(as: "ana", peers: peers)))
    }
}
