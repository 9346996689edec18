import RoomCore
import RoomProtocol

// MARK: Audio levels and network quality

/// What the media path measures, announced: who is talking and how well each peer's network carries them.
extension RoomAuthority {
    /// New audio levels (0–100) measured by the media path at `now`: stores them and announces, in one `speakers`
    /// event, those that changed for peers still in the room; nothing is sent when nothing changed. Each person's
    /// speaking time counts from these reports (`RoomSpeaking`).
    public mutating func updateLevels(_ levels: [PeerID: Int], now: Timestamp) -> Outcome {
        tallySpeaking(levels, now: now)
        var changed: [SpeakerLevel] = []
        for id in order {
            guard let level = levels[id], var peer = peers[id] else { continue }
            let clamped = min(100, max(0, level))
            guard peer.level != clamped else { continue }
            peer.level = clamped
            peers[id] = peer
            changed.append(SpeakerLevel(peer: id, level: clamped))
        }
        var outcome = Outcome()
        if !changed.isEmpty { broadcast(.speakers(levels: changed), into: &outcome) }
        return outcome
    }

    /// The least time between two `network_quality` announcements of one peer's score.
    public static let qualityInterval: Timestamp = 2000

    /// Network quality measured by the media path (about every second, for each peer measured). A peer's score is
    /// announced only when it changed, and at most once per `qualityInterval`: a stage member's to everyone, an
    /// audience member's only to those who may move people (hosts, moderators) and to themself, each group in
    /// one message. Someone who joined since the last call gets the scores already announced that they may see.
    /// Unsequenced: a measure, not room state.
    public mutating func updateQuality(_ measured: [PeerQuality], now: Timestamp) -> Outcome {
        let (stage, audience) = record(measured, now: now, throttled: true)
        if qualityTold.count > peers.count { qualityTold = qualityTold.filter { peers[$0] != nil } }
        var outcome = Outcome()
        func deliver(_ list: [PeerQuality], to recipients: Recipients) {
            guard !list.isEmpty else { return }
            outcome.deliveries.append(Delivery(to: recipients, ServerMessage(.networkQuality(list), seq: nil)))
        }
        // Newcomers first, with what was announced before them (this call's changes come to them below).
        let newcomers = order.filter { !qualityTold.contains($0) }
        if !newcomers.isEmpty {
            let announcedNow = Set((stage + audience).map(\.peer))
            var stageSeen: [PeerQuality] = []
            var allSeen: [PeerQuality] = []
            for id in order {
                guard let sent = qualitySent[id], !announcedNow.contains(id), let peer = peers[id] else { continue }
                allSeen.append(sent.quality)
                if roles.isOnStage(peer.role) { stageSeen.append(sent.quality) }
            }
            for id in newcomers {
                qualityTold.insert(id)
                guard let peer = peers[id] else { continue }
                if roles.can(peer.role, .move) {
                    deliver(allSeen, to: .peer(id))
                } else if !roles.isOnStage(peer.role), !announcedNow.contains(id), let own = qualitySent[id] {
                    deliver(stageSeen + [own.quality], to: .peer(id))
                } else {
                    deliver(stageSeen, to: .peer(id))
                }
            }
        }
        announce(stage: stage, audience: audience, into: &outcome)
        return outcome
    }

    /// Scores measured on another node of a cluster, which throttled them already (at most once per
    /// `qualityInterval` per peer, only when changed): each score of a peer still in the room that differs from
    /// the one last announced is recorded and announced by the rule of `updateQuality` (a stage member's to
    /// everyone, an audience member's to those who may move people and to themself). Every copy of the room
    /// applies it; each node delivers to its own connections.
    package mutating func announceQuality(_ changed: [PeerQuality], now: Timestamp) -> Outcome {
        let (stage, audience) = record(changed, now: now, throttled: false)
        var outcome = Outcome()
        announce(stage: stage, audience: audience, into: &outcome)
        return outcome
    }

    /// The score last announced for `peer`, if any.
    package func announcedScore(of peer: PeerID) -> Int? {
        qualitySent[peer]?.quality.score
    }

    /// The scores announced so far that `id` may see, in the room's order: every one for those who may move
    /// people, else the stage's and their own.
    package func announcedQuality(seenBy id: PeerID) -> [PeerQuality] {
        guard let viewer = peers[id] else { return [] }
        let all = roles.can(viewer.role, .move)
        return order.compactMap { other in
            guard let sent = qualitySent[other], let peer = peers[other] else { return nil }
            return all || other == id || roles.isOnStage(peer.role) ? sent.quality : nil
        }
    }

    /// Records the scores of peers in the room that differ from the ones last announced (`throttled`: and were not
    /// announced within `qualityInterval`), sorted into the stage's and the audience's, and forgets the scores of
    /// peers gone.
    private mutating func record(
        _ qualities: [PeerQuality], now: Timestamp, throttled: Bool
    ) -> (stage: [PeerQuality], audience: [PeerQuality]) {
        var stage: [PeerQuality] = []
        var audience: [PeerQuality] = []
        for quality in qualities {
            guard let peer = peers[quality.peer] else { continue }
            if let sent = qualitySent[quality.peer],
                sent.quality.score == quality.score || (throttled && now - sent.at < Self.qualityInterval)
            {
                continue
            }
            qualitySent[quality.peer] = SentQuality(quality: quality, at: now)
            if roles.isOnStage(peer.role) { stage.append(quality) } else { audience.append(quality) }
        }
        if qualitySent.count > peers.count { qualitySent = qualitySent.filter { peers[$0.key] != nil } }
        return (stage, audience)
    }

    /// Delivers scores by the rule: the stage's to everyone, the audience's to those who may move people and each
    /// to themself.
    private func announce(stage: [PeerQuality], audience: [PeerQuality], into outcome: inout Outcome) {
        if !stage.isEmpty {
            outcome.deliveries.append(Delivery(to: .everyone, ServerMessage(.networkQuality(stage), seq: nil)))
        }
        guard !audience.isEmpty else { return }
        let moderators = order.filter { id in peers[id].map { roles.can($0.role, .move) } ?? false }
        outcome.deliveries.append(Delivery(to: .peers(moderators), ServerMessage(.networkQuality(audience), seq: nil)))
        for quality in audience where !moderators.contains(quality.peer) {
            outcome.deliveries.append(
                Delivery(to: .peer(quality.peer), ServerMessage(.networkQuality([quality]), seq: nil)))
        }
    }
}
