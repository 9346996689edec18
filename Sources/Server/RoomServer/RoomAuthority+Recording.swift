import RoomCore
import RoomProtocol

// MARK: Recording

/// The room's recording: it goes on while a recorder is in the room, and everyone is told when it starts and
/// stops (`recording`), so that nothing keeps the room without the people in it knowing.
extension RoomAuthority {
    /// The reason given to a recorder removed because someone stopped the recording.
    public static let recordingStopped = "the recording was stopped"

    /// A recorder came in: the first one starts the recording, `by` the person who asked for it (`startedBy`, taken
    /// when it names someone here who may record: the server's own recorder names who asked it to) or else the
    /// recorder itself.
    mutating func recorderArrived(_ id: PeerID, startedBy: PeerID?, now: Timestamp, into outcome: inout Outcome) {
        recorders.insert(id)
        guard recording == nil else { return }
        var by = id
        if let startedBy, let asker = peers[startedBy], roles.can(asker.role, .record) { by = startedBy }
        let started = RecordingState(by: by, since: now)
        recording = started
        broadcast(.recording(started, by: nil, reason: nil), into: &outcome)
    }

    /// Stops the recording at `actor`'s request: every recorder in the room is removed (the server's own stops
    /// too, by `RecorderOrder.stop`), and everyone hears that it stopped.
    mutating func stopRecording(by actor: PeerID, into outcome: inout Outcome) {
        for id in order where recorders.contains(id) {
            broadcast(.removed(peer: id, by: actor, reason: Self.recordingStopped), into: &outcome)
            peers[id] = nil
            outcome.closes.append((id, .removed))
            outcome.changes.append(.roleForgotten(id))
        }
        order.removeAll { recorders.contains($0) }
        recorders = []
        settleRecording(stoppedBy: actor, reason: nil, into: &outcome)
        outcome.recorderOrders.append(.stop(by: actor))
    }

    /// After recorders left: when none is left, the recording is over, stopped by `stoppedBy` (nil when nobody
    /// stopped it), for `reason`, the last of them gave one (`recorder_error`).
    mutating func settleRecording(stoppedBy: PeerID?, reason: String?, into outcome: inout Outcome) {
        guard recording != nil, recorders.isEmpty else { return }
        recording = nil
        recorderReasons = [:]
        broadcast(.recording(nil, by: stoppedBy, reason: reason), into: &outcome)
    }

    /// The server's recorder of the room could not start, or was given up (it kept failing at once): `sentence`
    /// says so, capitalised and with its full stop, to whoever may record (a notice of its own, `recording`). It
    /// goes through the room, so that in a cluster the hosts on every node are told, not only the owner's.
    public func recorderProblem(_ sentence: String) -> Outcome {
        var outcome = Outcome()
        let hosts = order.filter { id in peers[id].map { roles.can($0.role, .record) } ?? false }
        guard !ended, !hosts.isEmpty else { return outcome }
        outcome.deliveries.append(
            Delivery(to: .peers(hosts), ServerMessage(.error(code: .recording, message: sentence, id: nil), seq: nil)))
        return outcome
    }

    /// Recorders among the peers who left.
    mutating func recordersLeft(_ gone: [Departure], into outcome: inout Outcome) {
        var left = false
        var reason: String?
        for departure in gone where recorders.remove(departure.peer) != nil {
            left = true
            if let given = recorderReasons.removeValue(forKey: departure.peer) { reason = given }
        }
        if left { settleRecording(stoppedBy: nil, reason: reason, into: &outcome) }
    }
}
