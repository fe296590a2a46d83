import Bus
import EventLog
import Foundation
import Testing

@testable import Runtime

/// A host's answers held back while it catches up, and the ones the log already has.
struct HeldOutputsTests {
    static func output(_ position: UInt64, _ index: Int) -> OutgoingEvent {
        OutgoingEvent(
            id: .derived(module: "watchlist", position: position, index: index), type: "bureau.watchlist.PairAdded",
            payload: Data([UInt8(truncatingIfNeeded: position)]), module: "watchlist", causation: position)
    }

    @Test func givenHeldOutputsWhenTheLogHoldsSomeThenOnlyTheOthersAreMissingInOrder() {
        // Given the outputs of inputs 3, 5 (two of them), 9 (a malformed input's error) and 70,000.
        var held = HeldOutputs()
        let outputs = [
            Self.output(3, 0), Self.output(5, 0), Self.output(5, 1), Self.output(9, 0xFFFF), Self.output(70_000, 0),
        ]
        for group in [[outputs[0]], [outputs[1], outputs[2]], [outputs[3]], [outputs[4]]] { held.hold(group) }

        // When the log turns out to hold the second output of input 5 and the error of input 9.
        let found = [outputs[2].id, outputs[3].id].map { held.markPublished($0) }

        // Then those are not published again, and the rest are, in order.
        #expect(found == [true, true])
        #expect(held.missing == [outputs[0], outputs[1], outputs[4]])
        #expect(held.count == 5)
    }

    @Test func anIDNoneHeldHasIsNotFoundAndChangesNothing() {
        var held = HeldOutputs()
        let outputs = (1...100).map { Self.output(UInt64($0 * 2), 0) }
        held.hold(outputs)

        let strangers: [EventID] = [
            .derived(module: "watchlist", position: 3, index: 0),  // between two held
            .derived(module: "watchlist", position: 1_000, index: 0),  // after the last
            .derived(module: "alerts", position: 4, index: 0),  // same position and index, another module
            .random(),
        ]

        #expect(strangers.map { held.markPublished($0) } == [false, false, false, false])
        #expect(held.missing == outputs)
        #expect(HeldOutputs().missing.isEmpty)
    }

    @Test func anOutputSeenTwiceInTheLogIsLeftOutOnceAndTheRestStayInOrder() {
        var held = HeldOutputs()
        let outputs = (1...10).map { Self.output(UInt64($0), 0) }
        held.hold(outputs)

        // A host that reads its own output twice (a catch-up read, then the live one).
        held.markPublished(outputs[4].id)
        held.markPublished(outputs[4].id)

        #expect(held.missing == outputs.filter { $0.id != outputs[4].id })
    }
}
