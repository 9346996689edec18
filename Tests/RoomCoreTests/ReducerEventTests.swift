import Testing

@testable import RoomCore

@Suite struct SnapshotTests {
    @Test func joiningSetsTheWholeState() {
        var state = RoomState(roles: roles)
        let hello = ChatMessage(from: "ana", fromName: "Ana", text: "hello", sentAt: 100)
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "Friday", selfID: "dara", peers: roomPeers, recentChat: [hello], seq: 10)
        let effects = reduce(&state, .server(.joined(snapshot), seq: 10))
        #expect(effects == [])
        #expect(state.roomID == "lobby")
        #expect(state.topic == "Friday")
        #expect(state.selfID == "dara")
        #expect(state.me == roomPeers[3])
        #expect(state.peers.count == 5)
        #expect(Array(state.chat) == [hello])
        #expect(state.connection == .connected)
        #expect(state.ending == nil)
        #expect(state.lastSeq == 10)
        #expect(state.ignoredEvents == IgnoredEvents())
        #expect(state.stage.map(\.id) == ["ana", "bo", "chen"])
        #expect(state.raisedHands.map(\.id) == ["eli"])
        #expect(state.audience.map(\.id) == ["dara"])
        #expect(state.activity.isEmpty)
    }

    @Test func anEndedSnapshotEndsTheRoom() {
        var state = RoomState(roles: roles)
        state.apply(.joined(RoomSnapshot(roomID: "r", selfID: "a", peers: [], ended: true, seq: 3)), seq: 3)
        #expect(state.ending == .ended(reason: ""))
    }

    @Test func aStaleSnapshotOfTheSameRoomIsIgnored() {
        var state = joinedRoom(as: "dara", seq: 10)
        let expected = state
        state.apply(.joined(RoomSnapshot(roomID: "lobby", selfID: "dara", peers: [], seq: 4)), seq: 4)
        var counted = expected
        counted.ignoredEvents = IgnoredEvents([.outOfOrder: 1])
        #expect(state == counted)
    }

    @Test func aFreshSnapshotAfterReconnectReplacesEverything() {
        var state = joinedRoom(as: "dara", seq: 10)
        state.apply(.reconnecting(attempt: 2), seq: 0)
        #expect(state.connection == .reconnecting(attempt: 2))
        state.apply(.reconnected, seq: 0)
        #expect(state.connection == .connected)
        state.apply(
            .joined(RoomSnapshot(roomID: "lobby", topic: "new", selfID: "dara", peers: [roomPeers[3]], seq: 40)),
            seq: 40)
        #expect(state == joinedRoom(as: "dara", peers: [roomPeers[3]], seq: 40).with { $0.topic = "new" })
    }
}

extension RoomState {
    func with(_ change: (inout RoomState) -> Void) -> RoomState {
        var copy = self
        change(&copy)
        return copy
    }
}

@Suite struct PeerEventTests {
    @Test func peerJoined() {
        var state = joinedRoom(as: "dara")
        let fay = peer("fay", "Fay", joinedAt: 9)
        let before = state
        #expect(state.apply(.peerJoined(fay), seq: 11) == [])
        #expect(
            state
                == before.with {
                    $0.peers["fay"] = fay
                    $0.sections.insert(fay, roles: roles)
                    $0.activity.append(.joined("fay", name: "Fay"))
                    $0.lastSeq = 11
                })
        #expect(state.audience.map(\.id) == ["dara", "fay"])
    }

    @Test func peerJoinedTwiceIsCounted() {
        var state = joinedRoom(as: "dara")
        let before = state
        state.apply(.peerJoined(peer("dara", "Other")), seq: 11)
        #expect(
            state
                == before.with {
                    $0.lastSeq = 11; $0.ignoredEvents = IgnoredEvents([.alreadyPresent: 1])
                })
    }

    @Test func peerLeft() {
        var state = joinedRoom(as: "dara")
        let before = state
        state.apply(.peerLeft("eli"), seq: 11)
        #expect(
            state
                == before.with {
                    $0.peers["eli"] = nil
                    $0.sections.remove(roomPeers[4], roles: roles)
                    $0.activity.append(.left("eli", name: "Eli"))
                    $0.lastSeq = 11
                })
        #expect(state.raisedHands.isEmpty)
    }

    /// A server that says this client left has not ended its session: only `removed` and `room_ended` do, and
    /// what comes after is still applied.
    @Test func aDepartureOfThisClientIsIgnored() {
        var state = joinedRoom(as: "dara")
        state.apply(.peerLeft("dara"), seq: 11)
        #expect(state.ending == nil)
        #expect(state.peers["dara"] != nil)
        #expect(state.ignoredEvents[.aboutThisClient] == 1)
        #expect(state.lastSeq == 11)
        state.apply(.topicChanged("after", by: "ana"), seq: 12)
        #expect(state.topic == "after")
    }

    @Test func unknownPeersAreCountedForEveryKind() {
        var state = joinedRoom(as: "dara")
        let before = state
        let events: [ServerEvent] = [
            .peerLeft("zed"), .roleChanged("zed", to: .speaker, by: "ana"), .handRaised("zed", at: 1),
            .handLowered("zed", by: nil), .muteChanged("zed", muted: false, by: nil),
            .chat(ChatMessage(from: "zed", fromName: "Zed", text: "hi", sentAt: 1)),
            .removed("zed", reason: "spam", by: "ana"), .speakers([SpeakerLevel(peer: "zed", level: 50)]),
        ]
        for (offset, event) in events.enumerated() { state.apply(event, seq: 11 + UInt64(offset)) }
        #expect(
            state
                == before.with {
                    $0.lastSeq = 18; $0.ignoredEvents = IgnoredEvents([.unknownPeer: 8])
                })
    }

    @Test func roleChangedMovesThePeerAndClearsTheHand() {
        var state = joinedRoom(as: "eli")
        state.apply(.invited("eli", by: "bo", at: 500), seq: 11)
        let before = state
        state.apply(.roleChanged("eli", to: .speaker, by: "bo"), seq: 12)
        var eli = roomPeers[4]
        eli.role = .speaker
        eli.handRaisedAt = nil
        #expect(
            state
                == before.with {
                    $0.peers["eli"] = eli
                    $0.sections.update(roomPeers[4], to: eli, roles: roles)
                    $0.invitation = nil
                    $0.invitations = [:]
                    $0.activity.append(.roleChanged("eli", name: "Eli", to: .speaker, by: "bo"))
                    $0.lastSeq = 12
                })
        #expect(state.stage.map(\.id) == ["ana", "bo", "chen", "eli"])
        #expect(state.raisedHands.isEmpty)
    }

    @Test func roleChangedWithinTheStageKeepsTheStageTicket() {
        var state = joinedRoom(as: "dara")
        state.apply(.roleChanged("chen", to: .moderator, by: "ana"), seq: 11)
        #expect(state.stage.map(\.id) == ["ana", "bo", "chen"])
        state.apply(.roleChanged("bo", to: .speaker, by: "ana"), seq: 12)
        #expect(state.stage.map(\.id) == ["ana", "chen", "bo"])
        state.apply(.roleChanged("bo", to: .moderator, by: "ana"), seq: 13)
        #expect(state.stage.map(\.id) == ["ana", "bo", "chen"])
        state.apply(.roleChanged("bo", to: .audience, by: "ana"), seq: 14)
        #expect(state.audience.map(\.id) == ["bo", "dara"])
        state.apply(.roleChanged("bo", to: .moderator, by: "ana"), seq: 15)
        #expect(state.stage.map(\.id) == ["ana", "chen", "bo"])
    }

    @Test func roleChangedToAnUnknownOrTheSameRoleIsCounted() {
        var state = joinedRoom(as: "dara")
        let before = state
        state.apply(.roleChanged("chen", to: "boss", by: "ana"), seq: 11)
        state.apply(.roleChanged("chen", to: .speaker, by: "ana"), seq: 12)
        #expect(
            state
                == before.with {
                    $0.lastSeq = 12; $0.ignoredEvents = IgnoredEvents([.unknownRole: 1, .noChange: 1])
                })
    }

    @Test func handRaisedAndLowered() {
        var state = joinedRoom(as: "dara")
        let before = state
        state.apply(.handRaised("dara", at: 900), seq: 11)
        var dara = roomPeers[3]
        dara.handRaisedAt = 900
        let raised = before.with {
            $0.peers["dara"] = dara
            $0.sections.update(roomPeers[3], to: dara, roles: roles)
            $0.lastSeq = 11
        }
        #expect(state == raised)
        #expect(state.raisedHands.map(\.id) == ["eli", "dara"])
        #expect(state.queuePosition(of: "dara") == 2)
        #expect(state.waitingTime(of: "dara", now: 1900) == 1000)
        #expect(state.audience.isEmpty)

        state.apply(.handRaised("dara", at: 950), seq: 12)
        #expect(
            state
                == raised.with {
                    $0.lastSeq = 12; $0.ignoredEvents = IgnoredEvents([.noChange: 1])
                })

        state.apply(.handLowered("dara", by: nil), seq: 13)
        #expect(
            state
                == before.with {
                    $0.lastSeq = 13; $0.ignoredEvents = IgnoredEvents([.noChange: 1])
                })
        #expect(state.queuePosition(of: "dara") == nil)

        state.apply(.handLowered("dara", by: nil), seq: 14)
        #expect(state.ignoredEvents[.noChange] == 2)
    }

    @Test func playingChanged() {
        var state = joinedRoom(as: "dara")
        let before = state
        state.apply(.playingChanged("chen", playing: true), seq: 12)
        #expect(
            state
                == before.with {
                    $0.peers["chen"]!.playing = true
                    $0.lastSeq = 12
                })
        state.apply(.playingChanged("chen", playing: true), seq: 13)
        #expect(state.ignoredEvents == IgnoredEvents([.noChange: 1]))
        state.apply(.playingChanged("chen", playing: false), seq: 14)
        #expect(state.peers["chen"]!.playing == false)
        state.apply(.playingChanged("zed", playing: true), seq: 15)
        #expect(state.ignoredEvents[.unknownPeer] == 1)
    }

    @Test func muteChanged() {
        var state = joinedRoom(as: "chen")
        state.apply(.askedToMute(by: "ana"), seq: 11)
        #expect(state.muteRequestedBy == "ana")
        let before = state
        state.apply(.muteChanged("chen", muted: true, by: "bo"), seq: 12)
        #expect(
            state
                == before.with {
                    $0.peers["chen"]!.muted = true
                    $0.muteRequestedBy = nil
                    $0.activity.append(.muted("chen", name: "Chen", by: "bo"))
                    $0.lastSeq = 12
                })
        state.apply(.muteChanged("chen", muted: true, by: "bo"), seq: 13)
        #expect(state.ignoredEvents == IgnoredEvents([.noChange: 1]))
        state.apply(.muteChanged("chen", muted: false, by: "chen"), seq: 14)
        #expect(state.peers["chen"]!.muted == false)
        #expect(state.activity.count == 1)
    }

    /// Network quality is unsequenced: it is kept per peer (clamped), leaves the sequence number alone, drops
    /// entries of unknown peers, and goes with the peer.
    @Test func networkQualityKeepsEachPeersLastScore() {
        var state = joinedRoom(as: "dara")
        let before = state
        let chen = PeerQuality(peer: "chen", score: 2, lossPercent: 12, jitterMilliseconds: 30, rttMilliseconds: 80)
        let wild = PeerQuality(peer: "ana", score: 9, lossPercent: 140, jitterMilliseconds: 1, rttMilliseconds: 2)
        let zed = PeerQuality(peer: "zed", score: 1, lossPercent: 50, jitterMilliseconds: 0, rttMilliseconds: 0)
        #expect(reduce(&state, .server(.networkQuality([chen, wild, zed]), seq: 0)).isEmpty)
        #expect(
            state
                == before.with {
                    $0.quality = [
                        "chen": chen,
                        "ana": PeerQuality(
                            peer: "ana", score: 5, lossPercent: 100, jitterMilliseconds: 1, rttMilliseconds: 2),
                    ]
                    $0.ignoredEvents = IgnoredEvents([.unknownPeer: 1])
                })
        var better = chen
        better.score = 5
        better.lossPercent = 0
        _ = reduce(&state, .server(.networkQuality([better]), seq: 0))
        #expect(state.quality["chen"] == better)
        #expect(state.lastSeq == before.lastSeq)
        state.apply(.peerLeft("chen"), seq: 11)
        #expect(state.quality["chen"] == nil)
        #expect(state.quality["ana"]?.score == 5)
    }

    @Test func networkQualityBeforeTheSnapshotIsIgnored() {
        var state = RoomState(roles: roles)
        let chen = PeerQuality(peer: "chen", score: 2, lossPercent: 12, jitterMilliseconds: 30, rttMilliseconds: 80)
        _ = reduce(&state, .server(.networkQuality([chen]), seq: 0))
        #expect(state.quality.isEmpty)
        #expect(state.ignoredEvents == IgnoredEvents([.beforeSnapshot: 1]))
    }

    /// The server sends only the levels that changed, so a steady talker is listed once and keeps their level.
    @Test func speakersSetTheLevelsListedAndKeepTheRest() {
        var state = joinedRoom(as: "dara")
        state.apply(.speakers([SpeakerLevel(peer: "ana", level: 70), SpeakerLevel(peer: "chen", level: 130)]), seq: 11)
        #expect(state.peers["ana"]!.level == 70)
        #expect(state.peers["chen"]!.level == 100)
        #expect(state.speaking == ["ana", "chen"])
        let before = state
        state.apply(.speakers([SpeakerLevel(peer: "chen", level: 20), SpeakerLevel(peer: "zed", level: 20)]), seq: 12)
        #expect(
            state
                == before.with {
                    $0.peers["chen"]!.level = 20
                    $0.lastSeq = 12
                    $0.ignoredEvents = IgnoredEvents([.unknownPeer: 1])
                })
        state.apply(.speakers([]), seq: 13)
        #expect(state.peers["ana"]!.level == 70)
        state.apply(.speakers([SpeakerLevel(peer: "ana", level: 0)]), seq: 14)
        #expect(state.peers["ana"]!.level == 0)
        #expect(state.speaking == ["chen"])
    }

    @Test func chatToEveryoneOneAndARoleIsKept() {
        var state = joinedRoom(as: "dara")
        let messages = [
            ChatMessage(from: "ana", fromName: "Ana", text: "hi all", sentAt: 1),
            ChatMessage(from: "bo", fromName: "Bo", text: "psst", to: .peer("dara"), sentAt: 2),
            ChatMessage(from: "ana", fromName: "Ana", text: "mods only", to: .role(.moderator), sentAt: 3),
        ]
        let before = state
        for (offset, message) in messages.enumerated() { state.apply(.chat(message), seq: 11 + UInt64(offset)) }
        #expect(
            state
                == before.with {
                    for message in messages { $0.chat.append(message) }
                    $0.lastSeq = 13
                })
    }

    @Test func chatHistoryIsBounded() {
        var state = joinedRoom(as: "dara")
        for i in 0..<(RoomState.chatCapacity + 20) {
            state.apply(
                .chat(ChatMessage(from: "ana", fromName: "Ana", text: "\(i)", sentAt: Int64(i))), seq: 11 + UInt64(i))
        }
        #expect(state.chat.count == RoomState.chatCapacity)
        #expect(state.chat.first?.text == "20")
        #expect(state.chat.last?.text == "\(RoomState.chatCapacity + 19)")
    }

    @Test func invitedToSpeak() {
        var state = joinedRoom(as: "dara")
        let before = state
        state.apply(.invited("dara", by: "bo", at: 900), seq: 11)
        #expect(
            state
                == before.with {
                    $0.invitation = Invitation(by: "bo", at: 900)
                    $0.invitations = ["dara": Invitation(by: "bo", at: 900)]
                    $0.lastSeq = 11
                })

        // Someone else's invitation is known too (the inviter and moderators show it), without a prompt.
        var other = joinedRoom(as: "ana")
        other.apply(.invited("dara", by: "bo", at: 900), seq: 11)
        #expect(other.invitation == nil)
        #expect(other.invitations == ["dara": Invitation(by: "bo", at: 900)])

        var speaker = joinedRoom(as: "chen")
        speaker.apply(.invited("chen", by: "bo", at: 900), seq: 11)
        #expect(speaker.invitation == nil)
        #expect(speaker.ignoredEvents == IgnoredEvents([.noChange: 1]))
    }

    @Test func anInvitationEndsDeclinedWithdrawnLapsedOrByARoleChange() {
        var state = joinedRoom(as: "ana")
        state.apply(.invited("dara", by: "bo", at: 900), seq: 11)
        state.apply(.invited("eli", by: "ana", at: 910), seq: 12)
        state.apply(.inviteDeclined("dara"), seq: 13)
        #expect(state.invitations == ["eli": Invitation(by: "ana", at: 910)])
        state.apply(.inviteWithdrawn("eli", by: "bo"), seq: 14)
        #expect(state.invitations.isEmpty)
        #expect(
            Array(state.activity.suffix(2)) == [
                .declinedInvitation("dara", name: "Dara"), .withdrawnInvitation("eli", name: "Eli", by: "bo"),
            ])
        state.apply(.invited("dara", by: "bo", at: 950), seq: 15)
        state.apply(.inviteExpired("dara"), seq: 16)
        #expect(state.invitations.isEmpty)
        #expect(state.activity.last == .expiredInvitation("dara", name: "Dara"))
        // An answer to an invitation that is not pending changes nothing.
        state.apply(.inviteExpired("dara"), seq: 17)
        #expect(state.ignoredEvents[.noChange] == 1)
        state.apply(.invited("eli", by: "ana", at: 960), seq: 18)
        state.apply(.roleChanged("eli", to: .speaker, by: "eli"), seq: 19)
        #expect(state.invitations.isEmpty)
        state.apply(.invited("dara", by: "ana", at: 970), seq: 20)
        state.apply(.peerLeft("dara"), seq: 21)
        #expect(state.invitations.isEmpty)
    }

    @Test func askedToMuteWhileAlreadyMutedChangesNothing() {
        var state = joinedRoom(as: "bo")
        state.apply(.askedToMute(by: "ana"), seq: 11)
        #expect(state.muteRequestedBy == nil)
        #expect(state.ignoredEvents == IgnoredEvents([.noChange: 1]))
    }

    @Test func removedSomeoneElse() {
        var state = joinedRoom(as: "dara")
        let before = state
        state.apply(.removed("eli", reason: "spam", by: "bo"), seq: 11)
        #expect(
            state
                == before.with {
                    $0.peers["eli"] = nil
                    $0.sections.remove(roomPeers[4], roles: roles)
                    $0.activity.append(.removed("eli", name: "Eli", reason: "spam", by: "bo"))
                    $0.lastSeq = 11
                })
    }

    @Test func removedSelfEndsTheRoomAndLaterEventsAreIgnored() {
        var state = joinedRoom(as: "dara")
        state.apply(.invited("dara", by: "bo", at: 900), seq: 11)
        let before = state
        state.apply(.removed("dara", reason: "spam", by: "bo"), seq: 12)
        let removed = before.with {
            $0.ending = .removed(reason: "spam", by: "bo")
            $0.invitation = nil
            $0.invitations = [:]
            $0.lastSeq = 12
        }
        #expect(state == removed)
        state.apply(.peerLeft("ana"), seq: 13)
        #expect(
            state
                == removed.with {
                    $0.lastSeq = 13; $0.ignoredEvents = IgnoredEvents([.afterEnding: 1])
                })
    }

    @Test func roomEnded() {
        var state = joinedRoom(as: "dara")
        let before = state
        state.apply(.roomEnded(reason: "that's all"), seq: 11)
        #expect(
            state
                == before.with {
                    $0.ending = .ended(reason: "that's all")
                    $0.activity.append(.ended(reason: "that's all"))
                    $0.lastSeq = 11
                })
    }

    @Test func topicChanged() {
        var state = joinedRoom(as: "dara")
        let before = state
        state.apply(.topicChanged("Saturday", by: "ana"), seq: 11)
        #expect(
            state
                == before.with {
                    $0.topic = "Saturday"
                    $0.activity.append(.topicChanged("Saturday", by: "ana"))
                    $0.lastSeq = 11
                })
        state.apply(.topicChanged("Saturday", by: "ana"), seq: 12)
        #expect(state.ignoredEvents == IgnoredEvents([.noChange: 1]))
    }

    @Test func connectionEventsAreUnsequenced() {
        var state = joinedRoom(as: "dara")
        let before = state
        state.apply(.reconnecting(attempt: 1), seq: 0)
        #expect(state == before.with { $0.connection = .reconnecting(attempt: 1) })
        state.apply(.reconnected, seq: 0)
        #expect(state == before)
        let effects = state.apply(.error(code: "forbidden", message: "only hosts can end the room"), seq: 0)
        #expect(effects == [.notice(Notice(.error, "only hosts can end the room"))])
        #expect(
            state
                == before.with { $0.lastError = ServerError(code: "forbidden", message: "only hosts can end the room") }
        )
        #expect(ServerEvent.reconnected.isSequenced == false)
        #expect(ServerEvent.peerLeft("x").isSequenced)
    }
}

@Suite struct OrderingTests {
    @Test func duplicatesAndOutOfOrderEventsAreIgnoredAndCounted() {
        var state = joinedRoom(as: "dara", seq: 10)
        state.apply(.handRaised("dara", at: 1), seq: 12)
        let applied = state
        state.apply(.handLowered("dara", by: nil), seq: 12)
        state.apply(.handLowered("dara", by: nil), seq: 11)
        state.apply(.peerLeft("eli"), seq: 10)
        #expect(state == applied.with { $0.ignoredEvents = IgnoredEvents([.duplicate: 1, .outOfOrder: 2]) })
        #expect(state.ignoredEvents.total == 3)
    }

    @Test func gapsAreAccepted() {
        var state = joinedRoom(as: "dara", seq: 10)
        state.apply(.topicChanged("x", by: nil), seq: 50)
        #expect(state.topic == "x")
        #expect(state.lastSeq == 50)
        #expect(state.ignoredEvents.total == 0)
    }

    @Test func eventsBeforeTheSnapshotAreIgnored() {
        var state = RoomState(roles: roles)
        state.apply(.peerJoined(peer("a", "A")), seq: 1)
        #expect(state == RoomState(roles: roles).with { $0.ignoredEvents = IgnoredEvents([.beforeSnapshot: 1]) })
    }

    @Test func ticksOnlySetTheTime() {
        var state = joinedRoom(as: "dara")
        let before = state
        #expect(reduce(&state, .tick(12345)) == [])
        #expect(state == before.with { $0.now = 12345 })
    }
}
