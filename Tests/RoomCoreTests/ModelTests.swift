import Foundation
import RoomTesting
import Testing

@testable import RoomCore

@Suite struct DisplayNameTests {
    @Test func trimsAndCollapsesWhitespace() {
        #expect(DisplayName.sanitize("  Ana \t  Lee \n") == "Ana Lee")
    }

    @Test func dropsControlAndBidiOverrideCharacters() {
        #expect(DisplayName.sanitize("A\u{0}n\u{7}a\u{202E}x\u{2066}") == "Anax")
    }

    @Test func keepsWideCharactersAndEmojiSequences() {
        #expect(DisplayName.sanitize("陳 👩‍💻") == "陳 👩‍💻")
    }

    @Test func boundsTheNameTo64GraphemeClusters() {
        let long = String(repeating: "é", count: 100)
        #expect(DisplayName.sanitize(long).count == 64)
        let flags = String(repeating: "🇯🇵", count: 70)
        #expect(DisplayName.sanitize(flags) == String(repeating: "🇯🇵", count: 64))
    }

    @Test func capsStackedCombiningMarks() {
        let zalgo = "a" + String(repeating: "\u{301}", count: 50)
        let cleaned = DisplayName.sanitize(zalgo)
        #expect(cleaned.count == 1)
        #expect(cleaned.unicodeScalars.count == DisplayName.maxScalarsPerGrapheme)
    }

    /// Cleaning is idempotent: the 64th cluster of a cut may be a space (it used to stay at the end), and a
    /// cluster cut to eight scalars may join the cluster after it (it used to leave ten in one).
    @Test func aCutLeavesNoSpaceAndNoOverlongClusterBehind() {
        let spaced = String(repeating: "a ", count: 40)
        #expect(DisplayName.sanitize(spaced) == String(repeating: "a ", count: 31) + "a")
        let jamo = String(repeating: "\u{1100}", count: 9) + "\u{1161}\u{11A8}" + "\u{1100}\u{1161}"
        #expect(jamo.count == 2)
        let cleaned = DisplayName.sanitize(jamo)
        #expect(cleaned == String(repeating: "\u{1100}", count: 8))
        #expect(DisplayName.sanitize(cleaned) == cleaned)
    }

    @Test func anEmptyOrBlankNameStaysEmpty() {
        #expect(DisplayName.sanitize("") == "")
        #expect(DisplayName.sanitize(" \u{200B}\u{0}\u{FEFF} ") == "")
    }
}

@Suite struct ScreenTextTests {
    @Test func chatCarriesNoTerminalControls() throws {
        let message = ChatMessage(from: "a", fromName: "\u{1B}[2JAna", text: "hi\u{1B}[31m red\nline\u{7}", sentAt: 1)
        #expect(message.fromName == "[2JAna")
        #expect(message.text == "hi[31m red line")
        // Every reader builds messages through this init (the cluster's: `ClusterFormatTests`).
        let read = ChatMessage(from: "a", fromName: "Ana", text: "x\u{1B}]0;title\u{07}y", sentAt: 1)
        #expect(read.text == "x]0;titley")
    }

    @Test func topicsReasonsAndErrorsAreCleanedAndBounded() {
        var state = joinedRoom(as: "dara")
        state.apply(.topicChanged("\u{1B}[1mBold\u{202E} " + String(repeating: "t", count: 300), by: "ana"), seq: 11)
        #expect(state.topic == "[1mBold " + String(repeating: "t", count: RoomState.maxTopicLength - 8))
        state.apply(.error(code: "x", message: "bad\u{1B}"), seq: 0)
        #expect(state.lastError == ServerError(code: "x", message: "bad"))
        state.apply(.roomEnded(reason: "bye\r\n"), seq: 12)
        #expect(state.ending == .ended(reason: "bye"))
    }
}

@Suite struct PeerTests {
    @Test func initSanitizesTheNameAndClampsTheLevel() {
        let p = Peer(id: "x", name: "  Bo\u{0} ", level: 250)
        #expect(p.name == "Bo")
        #expect(p.level == 100)
        var q = p
        q.level = -3
        #expect(q.level == 0)
    }

    @Test func waitingTimeCountsFromTheRaisedHand() {
        #expect(peer("a", "A", hand: 1000).waitingTime(now: 4500) == 3500)
        #expect(peer("a", "A", hand: 1000).waitingTime(now: 900) == 0)
        #expect(peer("a", "A").waitingTime(now: 4500) == nil)
    }
}

@Suite struct BoundedHistoryTests {
    @Test func keepsTheLastItemsOldestFirst() {
        var history = BoundedHistory<Int>(capacity: 3)
        for i in 1...5 { history.append(i) }
        #expect(Array(history) == [3, 4, 5])
        history.removeAll()
        #expect(history.isEmpty)
        history.append(9)
        #expect(Array(history) == [9])
    }
}

@Suite struct SortedListTests {
    @Test func staysSortedThroughInsertsAndRemovesAcrossChunks() {
        var generator = SplitMix64(seed: 7)
        var list = SortedList<Int>()
        var model: [Int] = []
        for step in 0..<5000 {
            if model.isEmpty || step % 3 != 0 {
                let x = Int.random(in: 0..<2000, using: &generator)
                list.insert(x)
                model.append(x)
            } else {
                let x = model.remove(at: Int.random(in: 0..<model.count, using: &generator))
                let removed = list.remove(x)
                #expect(removed)
            }
        }
        model.sort()
        #expect(Array(list) == model)
        #expect(list.count == model.count)
        #expect((0..<model.count).allSatisfy { list[$0] == model[$0] })
        #expect(list.position(of: model[100]) == model.firstIndex(of: model[100]))
        let removedMissing = list.remove(5000)
        #expect(!removedMissing)
        #expect(list.position(of: 5000) == nil)
        #expect(SortedList(model) == list)
    }
}
