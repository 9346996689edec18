import RoomCore
import Testing

@testable import RoomProtocol

/// The one mapping between the wire and RoomCore, both ways: what a client's store receives for each server
/// message, and that each of RoomCore's server events comes from one.
@Suite struct ModelMappingTests {
    let ana = AnnouncedPeer(Peer(id: "ana", name: "Ana", role: .host, muted: false, joinedAt: 1))
    let eli = Peer(id: "eli", name: "Eli", role: .audience, muted: true, joinedAt: 2)

    func action(_ event: WireEvent, seq: Int64? = 7, selfID: PeerID? = "eli") -> [RoomAction] {
        ServerMessage(event, seq: seq).roomActions(selfID: selfID)
    }

    @Test func everyServerMessageHasItsStoreAction() {
        let chat = ChatMessage(from: "ana", fromName: "Ana", text: "hi", to: .role(.speaker), sentAt: 3)
        let cases: [(WireEvent, [RoomAction])] = [
            (.peerJoined(AnnouncedPeer(eli)), [.server(.peerJoined(eli), seq: 7)]),
            (.peerLeft(peer: "eli", reason: .disconnected), [.server(.peerLeft("eli"), seq: 7)]),
            (
                .roleChanged(peer: "eli", role: .speaker, by: "ana", stepUp: nil),
                [.server(.roleChanged("eli", to: .speaker, by: "ana"), seq: 7)]
            ),
            (
                .roleChanged(peer: "ana", role: .audience, by: "ana", stepUp: .host),
                [.server(.roleChanged("ana", to: .audience, by: "ana", stepUp: .host), seq: 7)]
            ),
            (.handRaised(peer: "eli", at: 9), [.server(.handRaised("eli", at: 9), seq: 7)]),
            (.handLowered(peer: "eli", by: "eli"), [.server(.handLowered("eli", by: "eli"), seq: 7)]),
            (
                .muteChanged(peer: "eli", muted: true, by: "ana"),
                [.server(.muteChanged("eli", muted: true, by: "ana"), seq: 7)]
            ),
            (
                .speakers(levels: [SpeakerLevel(peer: "ana", level: 40)]),
                [.server(.speakers([SpeakerLevel(peer: "ana", level: 40)]), seq: 7)]
            ),
            (.chat(chat), [.server(.chat(chat), seq: 7)]),
            (.invited(peer: "eli", by: "ana", at: 9), [.server(.invited("eli", by: "ana", at: 9), seq: 7)]),
            (.invited(peer: "fay", by: "ana", at: 9), [.server(.invited("fay", by: "ana", at: 9), seq: 7)]),
            (.inviteDeclined(peer: "fay", by: "fay"), [.server(.inviteDeclined("fay"), seq: 7)]),
            (.inviteWithdrawn(peer: "fay", by: "bo"), [.server(.inviteWithdrawn("fay", by: "bo"), seq: 7)]),
            (.inviteExpired(peer: "fay"), [.server(.inviteExpired("fay"), seq: 7)]),
            (.roomEnding(peer: "ana", name: "Ana", at: 9), [.server(.roomEnding("ana", name: "Ana", at: 9), seq: 7)]),
            (.roomEnding(peer: "bo", name: "Bo", at: nil), [.server(.roomEnding("bo", name: "Bo", at: nil), seq: 7)]),
            (.handsAllowed(allowed: false, by: "bo"), [.server(.handsAllowed(false, by: "bo"), seq: 7)]),
            (.askedToMute(peer: "eli", by: "ana"), [.server(.askedToMute(by: "ana"), seq: 7)]),
            (
                .removed(peer: "gus", by: "ana", reason: "spam"),
                [.server(.removed("gus", reason: "spam", by: "ana"), seq: 7)]
            ),
            (.roomEnded(by: "ana", reason: "bye"), [.server(.roomEnded(reason: "bye"), seq: 7)]),
            (.topicChanged(topic: "t", by: "ana"), [.server(.topicChanged("t", by: "ana"), seq: 7)]),
        ]
        for (event, expected) in cases {
            #expect(action(event) == expected, "\(event)")
        }
        #expect(
            action(.error(code: .forbidden, message: "no", id: .integer(3)), seq: nil)
                == [.server(.error(code: "forbidden", message: "no"), seq: 0)])
    }

    @Test func theSnapshotBecomesTheStoresSnapshot() {
        let chat = ChatMessage(from: "ana", fromName: "Ana", text: "hi", sentAt: 3)
        let snapshot = JoinedSnapshot(
            room: "lobby", selfID: "eli",
            peers: [ana, AnnouncedPeer(eli, invitation: Invitation(by: "ana", at: 5), stepUp: .speaker)], topic: "t",
            chat: [chat], roles: protocolRoles, resumed: true, tokenRole: .speaker)
        #expect(
            action(.joined(snapshot), seq: 10, selfID: nil)
                == [
                    .server(
                        .joined(
                            RoomSnapshot(
                                roomID: "lobby", topic: "t", selfID: "eli", peers: [ana.peer, eli], recentChat: [chat],
                                seq: 10, invitations: ["eli": Invitation(by: "ana", at: 5)], stepUp: .speaker,
                                tokenRole: .speaker)), seq: 10)
                ])
    }

    @Test func gatheredJoinsBecomeOneActionPerPeerWithItsOwnNumber() {
        let peers = ["gus", "hana", "ivo"].map { AnnouncedPeer(Peer(id: PeerID($0), name: $0, joinedAt: 1)) }
        #expect(
            action(.peersJoined(peers), seq: 12)
                == [
                    .server(.peerJoined(peers[0].peer), seq: 10), .server(.peerJoined(peers[1].peer), seq: 11),
                    .server(.peerJoined(peers[2].peer), seq: 12),
                ])
    }

    @Test func gatheredDeparturesBecomeOneActionPerPeerWithItsOwnNumber() {
        let gone = [Departure("gus", .disconnected), Departure("hana", .left), Departure("ivo", .disconnected)]
        #expect(
            action(.peersLeft(gone), seq: 20)
                == [
                    .server(.peerLeft("gus"), seq: 18), .server(.peerLeft("hana"), seq: 19),
                    .server(.peerLeft("ivo"), seq: 20),
                ])
    }

    @Test func aChangeTheServerMadeItselfHasNoActor() {
        #expect(
            action(.roleChanged(peer: "eli", role: .speaker, by: "", stepUp: nil)) == [
                .server(.roleChanged("eli", to: .speaker, by: nil), seq: 7)
            ])
        #expect(action(.handLowered(peer: "eli", by: "")) == [.server(.handLowered("eli", by: nil), seq: 7)])
        #expect(action(.topicChanged(topic: "t", by: "")) == [.server(.topicChanged("t", by: nil), seq: 7)])
    }

    /// The other way: every event RoomCore's store takes from a server comes from a server message (the three
    /// connection events are the client runtime's own).
    @Test func everyStoreEventComesFromTheWire() {
        let snapshot = JoinedSnapshot(
            room: "lobby", selfID: "eli", peers: [AnnouncedPeer(eli)], topic: "", chat: [], roles: protocolRoles,
            resumed: false)
        let wire: [WireEvent] = [
            .joined(snapshot), .peerJoined(ana), .peerLeft(peer: "ana", reason: .left),
            .roleChanged(peer: "eli", role: .speaker, by: "ana", stepUp: nil), .handRaised(peer: "eli", at: 1),
            .handLowered(peer: "eli", by: "eli"), .muteChanged(peer: "eli", muted: false, by: "eli"),
            .micChanged(peer: "eli", working: false), .playingChanged(peer: "eli", playing: true),
            .speakers(levels: []), .networkQuality([]),
            .reaction(ReactionBurst(counts: [.init(.clap, 1)], senders: [.init("ana", .clap)])),
            .chat(ChatMessage(from: "ana", fromName: "Ana", text: "x", sentAt: 1)),
            .invited(peer: "eli", by: "ana", at: 9), .inviteDeclined(peer: "fay", by: "fay"),
            .inviteWithdrawn(peer: "fay", by: "ana"), .inviteExpired(peer: "fay"),
            .askedToMute(peer: "eli", by: "ana"), .removed(peer: "ana", by: "bo", reason: ""),
            .roomEnded(by: "ana", reason: ""), .roomEnding(peer: "ana", name: "Ana", at: 9),
            .handsAllowed(allowed: false, by: "ana"),
            .topicChanged(topic: "", by: "ana"),
            .listingChanged(listed: false, by: "ana"),
            .recording(RecordingState(by: "ana", since: 9), by: nil, reason: nil),
            .streaming(StreamingState(to: ["radio"], since: 9), by: "ana", reason: nil),
            .inviteLink(room: "lobby", role: .audience, token: "a.b.c", expiresAt: 9, id: nil),
            .links(room: "lobby", links: [], withdrawn: [], locked: false, id: nil),
            .bans(bans: [], lifted: ["bo"], id: nil),
            .stats(people: [], id: nil),
            .knock(room: "lobby", Knock(peer: "gus", name: "Gus", state: .waiting)), .waiting(room: "lobby"),
            .error(code: .conflict, message: "", id: nil),
        ]
        let base = ServerAddress(secure: true, host: "rooms.example.org", port: 443)
        var kinds: Set<String> = []
        for event in wire {
            for case .server(let event, _) in ServerMessage(event, seq: 1).roomActions(selfID: "eli", linkBase: base) {
                kinds.insert(Self.kind(event))
            }
        }
        #expect(
            kinds == [
                "joined", "peerJoined", "peerLeft", "roleChanged", "handRaised", "handLowered", "muteChanged",
                "micChanged", "playingChanged", "speakers", "networkQuality", "reaction", "chat", "invited",
                "inviteDeclined", "inviteWithdrawn", "inviteExpired",
                "askedToMute",
                "removed", "roomEnded", "roomEnding", "handsAllowed",
                "topicChanged", "listingChanged", "recording", "inviteLink", "links", "bans", "knock", "waitingForHost",
                "error", "stats", "streaming",
            ])
    }

    /// An invite link becomes the whole link on the server the client reached; without that server it is skipped.
    @Test func anInviteLinkIsWrittenForTheServerTheClientReached() {
        let message = ServerMessage(
            .inviteLink(room: "lobby", role: .speaker, token: "h.c.s", expiresAt: 86_400_000, id: .integer(4)),
            seq: nil)
        let base = ServerAddress(secure: true, host: "rooms.example.org", port: 443, prefix: "/clubroom")
        #expect(
            message.roomActions(selfID: "eli", linkBase: base) == [
                .server(
                    .inviteLink(
                        InviteLink(
                            room: "lobby", role: .speaker,
                            link: "wss://rooms.example.org/clubroom/rooms/lobby#invite=h.c.s", expiresAt: 86_400_000)),
                    seq: 0)
            ])
        #expect(message.roomActions(selfID: "eli").isEmpty)
        #expect(
            ServerMessage(.listingChanged(listed: true, by: ""), seq: 8).roomActions(selfID: "eli") == [
                .server(.listingChanged(listed: true, by: nil), seq: 8)
            ])
    }

    /// Each case of RoomCore's `ServerEvent`; the switch is exhaustive, so a new case must be named here (and
    /// then come from the wire, above) before the tests build.
    static func kind(_ event: ServerEvent) -> String {
        switch event {
        case .joined: "joined"
        case .peerJoined: "peerJoined"
        case .peerLeft: "peerLeft"
        case .roleChanged: "roleChanged"
        case .handRaised: "handRaised"
        case .handLowered: "handLowered"
        case .muteChanged: "muteChanged"
        case .micChanged: "micChanged"
        case .playingChanged: "playingChanged"
        case .speakers: "speakers"
        case .networkQuality: "networkQuality"
        case .reaction: "reaction"
        case .chat: "chat"
        case .invited: "invited"
        case .inviteDeclined: "inviteDeclined"
        case .inviteWithdrawn: "inviteWithdrawn"
        case .inviteExpired: "inviteExpired"
        case .askedToMute: "askedToMute"
        case .removed: "removed"
        case .roomEnded: "roomEnded"
        case .roomEnding: "roomEnding"
        case .handsAllowed: "handsAllowed"
        case .topicChanged: "topicChanged"
        case .listingChanged: "listingChanged"
        case .recording: "recording"
        case .streaming: "streaming"
        case .inviteLink: "inviteLink"
        case .links: "links"
        case .bans: "bans"
        case .stats: "stats"
        case .knock: "knock"
        case .waitingForHost: "waitingForHost"
        case .reconnecting: "reconnecting"
        case .reconnected: "reconnected"
        case .error: "error"
        }
    }
}

/// The `roles` of a `joined` are read from the message's strict JSON and checked by the role table's own rules.
@Suite struct SnapshotRoleTableTests {
    func joined(roles: String) -> String {
        #"{"type":"joined","seq":1,"protocol":1,"room":"r","self":"a","topic":"","resumed":false,"peers":[],"chat":[],"roles":\#(roles)}"#
    }

    @Test func theTableSurvivesTheWire() throws {
        let message = ServerMessage(
            .joined(
                JoinedSnapshot(
                    room: "r", selfID: "a", peers: [], topic: "", chat: [], roles: protocolRoles, resumed: false)),
            seq: 1)
        guard case .joined(let snapshot) = try ControlCodec.decodeServer(ControlCodec.encode(message)).event else {
            Issue.record("not a snapshot")
            return
        }
        #expect(snapshot.roles == protocolRoles)
    }

    @Test func aTableThatBreaksTheRulesIsRefused() {
        let hostOnly = #"[{"name":"host","label":"h","rank":0,"on_stage":true,"permissions":["chat"]}]"#
        #expect(
            throws: ControlDecodeError(
                .badRequest,
                #"the server's role table: roles: no "audience" role; every table needs "host" and "audience""#)
        ) {
            try ControlCodec.decodeServer(joined(roles: hostOnly))
        }
        let twice =
            #"[{"name":"host","label":"h","rank":0,"on_stage":true,"permissions":[]},{"name":"host","label":"h","rank":1,"on_stage":true,"permissions":[]}]"#
        #expect(
            throws: ControlDecodeError(
                .badRequest,
                #"the server's role table: roles[1].name: duplicate role "host" (first defined at roles[0])"#)
        ) {
            try ControlCodec.decodeServer(joined(roles: twice))
        }
        #expect(throws: ControlDecodeError(.duplicateKey, "the key \"rank\" appears twice at byte 153")) {
            try ControlCodec.decodeServer(
                joined(roles: #"[{"name":"host","label":"h","rank":0,"rank":1,"on_stage":true,"permissions":[]}]"#))
        }
    }

    /// A newer server may grant a permission this client does not know: it is skipped, as unknown fields are,
    /// and the server still enforces it.
    @Test func anUnknownPermissionIsSkipped() throws {
        let roles =
            #"[{"name":"host","label":"h","rank":0,"on_stage":true,"permissions":["chat","fly"]},{"name":"audience","label":"l","rank":1,"on_stage":false,"permissions":[]}]"#
        guard case .joined(let snapshot) = try ControlCodec.decodeServer(joined(roles: roles)).event else {
            Issue.record("not a snapshot")
            return
        }
        #expect(snapshot.roles.definition(of: .host)?.permissions == [.chat])
    }
}
