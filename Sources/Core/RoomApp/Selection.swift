import RoomCore
import TermUI

/// The sections a person can move through, in screen order: the raised-hand queue only for those who see it.
func navigableSections(_ state: AppState) -> [SectionName] {
    state.seesWholeQueue ? [.stage, .raisedHands, .audience] : [.stage, .audience]
}

func count(of section: SectionName, in state: AppState) -> Int {
    switch section {
    case .stage: state.room.stage.count
    case .raisedHands: state.room.raisedHands.count
    case .audience: state.room.audience.count
    }
}

func peerID(at index: Int, in section: SectionName, of state: AppState) -> PeerID {
    switch section {
    case .stage: state.room.stage[index].id
    case .raisedHands: state.room.raisedHands[index].id
    case .audience: state.room.audience[index].id
    }
}

/// Where a peer sits in its section: a scan of the (small) stage, the queue's own index, or a binary search of the
/// audience by its sort key, so finding someone among ten thousand takes a dozen comparisons.
func position(of id: PeerID, in state: AppState) -> SelectionAnchor? {
    guard let section = state.room.section(of: id), let peer = state.room.peers[id] else { return nil }
    switch section {
    case .stage:
        guard let index = state.room.stage.ids.firstIndex(of: id) else { return nil }
        return SelectionAnchor(section: .stage, index: index)
    case .raisedHands:
        guard let place = state.room.queuePosition(of: id) else { return nil }
        return SelectionAnchor(section: .raisedHands, index: place - 1)
    case .audience:
        let audience = state.room.audience
        let key = AudienceKey(name: peer.name, id: id)
        var low = 0
        var high = audience.count
        while low < high {
            let mid = (low + high) / 2
            let other = audience[mid]
            if AudienceKey(name: other.name, id: other.id) < key { low = mid + 1 } else { high = mid }
        }
        guard low < audience.count, audience[low].id == id else { return nil }
        return SelectionAnchor(section: .audience, index: low)
    }
}

/// Keeps the selection on the same person; when they are gone (or no longer shown), moves it to whoever now sits
/// where they were, or the nearest section with anyone in it.
func settleSelection(_ state: inout AppState) {
    guard state.room.hasJoined else { return }
    let sections = navigableSections(state)
    if let id = state.selection, let anchor = position(of: id, in: state), sections.contains(anchor.section) {
        state.selectionAnchor = anchor
        return
    }
    let anchor = state.selectionAnchor ?? SelectionAnchor(section: .stage, index: 0)
    let start = sections.firstIndex(of: anchor.section) ?? 0
    // The same section first, then those after it, then those before.
    let order = Array(sections[start...]) + sections[..<start].reversed()
    for section in order {
        let total = count(of: section, in: state)
        guard total > 0 else { continue }
        let index = section == anchor.section ? min(anchor.index, total - 1) : 0
        state.selection = peerID(at: index, in: section, of: state)
        state.selectionAnchor = SelectionAnchor(section: section, index: index)
        return
    }
    state.selection = nil
    state.selectionAnchor = nil
}

/// How many peers share a row of each section at the current width, as the screen lays them out.
func columns(of section: SectionName, in state: AppState) -> Int {
    let model = RoomScreenMapper.model(state)
    let width = state.screenWidth
    switch section {
    case .stage: return StageGrid(entries: model.stage, selected: nil).columnCount(width: width, glyphs: state.glyphs)
    case .raisedHands: return HandQueueView(queue: model.hands, selected: nil).columnCount(width: width)
    case .audience:
        return AudienceGrid(
            names: model.audience, offset: model.audienceOffset, total: model.audienceCount, selected: nil
        )
        .columnCount(width: width)
    }
}

/// Moves the selection: ←→/hl step through everyone in screen order, ↑↓/jk move a row (into the next section at
/// the ends), Home/End go to the first and last person.
func moveSelection(_ state: inout AppState, _ key: Key) {
    let sections = navigableSections(state).filter { count(of: $0, in: state) > 0 }
    guard !sections.isEmpty else { return }
    guard let anchor = state.selection.flatMap({ position(of: $0, in: state) }),
        let sectionIndex = sections.firstIndex(of: anchor.section)
    else {
        select(&state, sections[0], 0)
        return
    }
    let section = anchor.section
    let index = anchor.index
    let total = count(of: section, in: state)
    switch key {
    case .right, .char("l"):
        if index + 1 < total {
            select(&state, section, index + 1)
        } else if sectionIndex + 1 < sections.count {
            select(&state, sections[sectionIndex + 1], 0)
        }
    case .left, .char("h"):
        if index > 0 {
            select(&state, section, index - 1)
        } else if sectionIndex > 0 {
            let previous = sections[sectionIndex - 1]
            select(&state, previous, count(of: previous, in: state) - 1)
        }
    case .down, .char("j"):
        let cols = columns(of: section, in: state)
        let lastRow = (total - 1) / cols
        if index / cols < lastRow {
            select(&state, section, min(total - 1, index + cols))
        } else if sectionIndex + 1 < sections.count {
            let next = sections[sectionIndex + 1]
            select(&state, next, min(index % cols, count(of: next, in: state) - 1))
        }
    case .up, .char("k"):
        let cols = columns(of: section, in: state)
        if index >= cols {
            select(&state, section, max(index % cols, index - cols))
        } else if sectionIndex > 0 {
            let previous = sections[sectionIndex - 1]
            let previousTotal = count(of: previous, in: state)
            let previousCols = columns(of: previous, in: state)
            let lastRowStart = (previousTotal - 1) / previousCols * previousCols
            select(&state, previous, min(previousTotal - 1, lastRowStart + index % cols))
        }
    case .home:
        select(&state, sections[0], 0)
    case .end:
        let last = sections[sections.count - 1]
        select(&state, last, count(of: last, in: state) - 1)
    default:
        break
    }
}

private func select(_ state: inout AppState, _ section: SectionName, _ index: Int) {
    state.selection = peerID(at: index, in: section, of: state)
    state.selectionAnchor = SelectionAnchor(section: section, index: index)
}
