import RoomCore

/// The local volumes a person may choose, in percent.
public let volumeRange = 0...200
/// How far `+` and `-` move a volume, in percent.
public let volumeStep = 10

/// The volumes kept from earlier sessions, clamped to the range; 100 % is not listed.
func adoptVolumes(_ state: inout AppState, _ volumes: [PeerID: Int]) {
    state.volumes = volumes.compactMapValues { percent in
        let clamped = min(volumeRange.upperBound, max(volumeRange.lowerBound, percent))
        return clamped == 100 ? nil : clamped
    }
}

/// `+`/`-` on the selected person: the next multiple of ten up or down, for people on the stage.
func stepVolume(_ state: inout AppState, _ peer: Peer, up: Bool) -> [AppEffect] {
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
    return [.sound(.setVolume(peer.id, percent: percent))]
        + show(&state, Notice(.info, "\(peer.name) now sounds at \(percent) % to you\(silent)."))
}

/// `/volume NAME [PERCENT]`: sets a volume, or says what it is. Anyone but yourself, on stage or not, so a
/// volume can be chosen before someone speaks.
func volumeCommand(_ state: inout AppState, _ id: PeerID, percent: Int?) -> [AppEffect] {
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
func commandName(for peer: Peer, in state: AppState) -> String {
    let exact = state.room.peers.values.filter { $0.name.lowercased() == peer.name.lowercased() }.count == 1
    let name = exact ? peer.name : peer.id.rawValue
    return name.contains(" ") || name.contains("\"") ? "\"" + name.replacingQuotes() + "\"" : name
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
