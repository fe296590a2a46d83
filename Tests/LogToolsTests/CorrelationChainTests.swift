import Bus
import EventLog
import Foundation
import LogTools
import Testing

/// The events one intent caused, in one pass over the log.
struct CorrelationChainTests {
    static func event(
        _ position: UInt64, id: EventID = .random(), causation: UInt64 = 0, correlation: EventID = .zero
    ) -> StoredEvent {
        StoredEvent(
            position: position, id: id, type: "bureau.test.Happened", commitTime: CommitTime(seconds: 0, nanos: 0),
            causation: causation, correlation: correlation, payload: Data())
    }

    @Test func theIntentItsCorrelatedEventsAndWhatTheyCausedAreInTheChainWithTheirDepth() {
        let intent = EventID.random()
        var chain = CorrelationChain(intent)

        let depths = [
            chain.depth(of: Self.event(1)),  // unrelated
            chain.depth(of: Self.event(2, id: intent)),  // the intent
            chain.depth(of: Self.event(3, causation: 2, correlation: intent)),  // its answer
            chain.depth(of: Self.event(4, causation: 3)),  // caused by the answer, correlation forgotten
            chain.depth(of: Self.event(5, causation: 1)),  // caused by the unrelated event
            chain.depth(of: Self.event(6, correlation: intent)),  // correlated, its cause unknown
        ]

        #expect(depths == [nil, 0, 1, 2, nil, 0])
    }
}
