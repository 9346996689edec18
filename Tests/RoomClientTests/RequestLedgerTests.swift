import RoomCore
import RoomProtocol
import Testing

@testable import RoomClient

/// A session sends a request the server could not confirm again under the same id, a bounded number of times
/// with a doubling wait, and passes on only what the person must hear.
@Suite struct RequestLedgerTests {
    func error(_ code: ErrorCode, _ id: RequestID, _ text: String = "x") -> ServerMessage {
        ServerMessage(.error(code: code, message: text, id: id), seq: nil)
    }

    @Test func idsAreTheSessionsOwnAndNeverRepeat() {
        var ledger = RequestLedger(tag: "abc")
        #expect(ledger.newID() == .string("abc-1"))
        #expect(ledger.newID() == .string("abc-2"))
        let tags = Set((0..<50).map { _ in RequestLedger.randomTag() })
        #expect(tags.count == 50)
        #expect(tags.allSatisfy { $0.count == 10 })
    }

    @Test func anUnconfirmedRequestIsSentAgainUnderItsIdFourTimesThenPassedOn() {
        var ledger = RequestLedger(tag: "t")
        let id = RequestID.string("t-1")
        ledger.note(id, text: "chat-1")
        let unconfirmed = error(.unconfirmed, id)
        var delays: [Duration] = []
        for _ in 1...4 {
            guard case .retry(let text, let delay) = ledger.answered(.unconfirmed, id: id, message: unconfirmed) else {
                Issue.record("expected a retry")
                return
            }
            #expect(text == "chat-1")
            delays.append(delay)
        }
        #expect(delays == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4)])
        #expect(ledger.answered(.unconfirmed, id: id, message: unconfirmed) == .deliver)
        // Passed on as unknown: a later copy's `already_applied`, `unconfirmed` or `internal` adds nothing, but the
        // room's decision, when a copy brings it, is news; said once.
        #expect(ledger.answered(.alreadyApplied, id: id, message: error(.alreadyApplied, id)) == .drop)
        #expect(ledger.answered(.unconfirmed, id: id, message: unconfirmed) == .drop)
        #expect(ledger.answered(.internal, id: id, message: error(.internal, id)) == .drop)
        #expect(ledger.answered(.conflict, id: id, message: error(.conflict, id)) == .deliver)
        #expect(ledger.answered(.conflict, id: id, message: error(.conflict, id)) == .drop)
    }

    /// A cluster node may send a request several times while Redis is away; the room answers each copy of a
    /// refused request with the same refusal, which the person hears once.
    @Test func aRefusalIsPassedOnOnceWhateverCopiesBringItAgain() {
        var ledger = RequestLedger(tag: "t")
        ledger.note(.integer(2), text: "raise")
        let refused = error(.conflict, .integer(2), "your hand is already raised")
        #expect(ledger.answered(.conflict, id: .integer(2), message: refused) == .deliver)
        #expect(ledger.answered(.conflict, id: .integer(2), message: refused) == .drop)
        // The same id sent anew (a script reusing its ids) is a new request, whose answer is passed on.
        ledger.note(.integer(2), text: "raise")
        #expect(ledger.answered(.conflict, id: .integer(2), message: refused) == .deliver)
    }

    @Test func aRetryRefusedForWantOfTheRoomStaysUnconfirmed() {
        var ledger = RequestLedger(tag: "t")
        let id = RequestID.integer(5)
        ledger.note(id, text: "chat-5")
        let unconfirmed = error(.unconfirmed, id, "may still take effect")
        _ = ledger.answered(.unconfirmed, id: id, message: unconfirmed)
        // The copy sent again found the cluster unavailable: the first copy's outcome is still unknown.
        let unavailable = error(.internal, id, "the cluster is unavailable, try again")
        for _ in 2...4 {
            guard case .retry = ledger.answered(.internal, id: id, message: unavailable) else {
                Issue.record("expected a retry")
                return
            }
        }
        #expect(ledger.answered(.internal, id: id, message: unavailable) == .replace(unconfirmed))
    }

    @Test func anInternalErrorOfARequestNeverUnconfirmedIsARealAnswer() {
        var ledger = RequestLedger(tag: "t")
        ledger.note(.integer(1), text: "a")
        #expect(ledger.answered(.internal, id: .integer(1), message: error(.internal, .integer(1))) == .deliver)
    }

    @Test func theAnswerToARepeatOfAnAppliedRequestIsDropped() {
        var ledger = RequestLedger(tag: "t")
        ledger.note(.integer(1), text: "a")
        _ = ledger.answered(.unconfirmed, id: .integer(1), message: error(.unconfirmed, .integer(1)))
        #expect(
            ledger.answered(.alreadyApplied, id: .integer(1), message: error(.alreadyApplied, .integer(1))) == .drop)
        // A cluster node may have sent several copies: each one's answer is dropped.
        #expect(
            ledger.answered(.alreadyApplied, id: .integer(1), message: error(.alreadyApplied, .integer(1))) == .drop)
        // An id this session did not send is passed on as it is.
        #expect(
            ledger.answered(.alreadyApplied, id: .integer(9), message: error(.alreadyApplied, .integer(9)))
                == .deliver)
    }

    @Test func retriesWhileTheConnectionIsDownCountAndEndInTheUnconfirmed() {
        var ledger = RequestLedger(tag: "t")
        let id = RequestID.integer(3)
        ledger.note(id, text: "c")
        let unconfirmed = error(.unconfirmed, id)
        _ = ledger.answered(.unconfirmed, id: id, message: unconfirmed)
        for _ in 2...4 { #expect((try? ledger.retryWhileDown(id).get()) == "c") }
        guard case .failure(let unanswered) = ledger.retryWhileDown(id) else {
            Issue.record("the retries are spent")
            return
        }
        #expect(unanswered.message == unconfirmed)
    }

    @Test func only64RequestsAreRemembered() {
        var ledger = RequestLedger(tag: "t")
        for number in 1...65 { ledger.note(.integer(Int64(number)), text: "\(number)") }
        #expect(ledger.answered(.unconfirmed, id: .integer(1), message: error(.unconfirmed, .integer(1))) == .deliver)
        guard case .retry = ledger.answered(.unconfirmed, id: .integer(2), message: error(.unconfirmed, .integer(2)))
        else {
            Issue.record("the 2nd is still remembered")
            return
        }
    }
}
