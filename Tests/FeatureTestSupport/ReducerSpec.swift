import Bus
import EventLog
import Runtime
import SwiftProtobuf

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Tests a reducer as given events / when an input / then outputs, without a bus.
///
///     var spec = ReducerSpec(WatchlistReducer())
///     spec.given(rates("EUR", ["USD": "1.1"]))
///     #expect(spec.when(PairAddRequested(base: "EUR", quote: "USD")) == [Emitted(PairAdded(...))])
public struct ReducerSpec<R: Reducer> {
    public let reducer: R
    public private(set) var state: R.State
    public private(set) var position: UInt64 = 0
    /// The commit time of the next input; ``advance(by:)`` moves it.
    public private(set) var now = CommitTime(seconds: 1_767_225_600, nanos: 0)

    public init(_ reducer: R) {
        self.reducer = reducer
        state = reducer.initialState
    }

    /// Given a state from elsewhere (a snapshot restored, say), as it is, before any input.
    public mutating func given(state: R.State) {
        self.state = state
    }

    /// Applies inputs as history; their outputs are not checked.
    public mutating func given(_ messages: any SwiftProtobuf.Message...) {
        for message in messages { _ = when(message) }
    }

    /// Applies one input and returns what the reducer emitted.
    @discardableResult
    public mutating func when(_ message: any SwiftProtobuf.Message) -> [Emitted] {
        position += 1
        let event = StoredEvent(
            position: position, id: .random(), type: Swift.type(of: message).protoMessageName, commitTime: now,
            payload: (try? message.serializedData()) ?? Data())
        guard let input = try? reducer.inputs.decode(event) else {
            return []
        }
        return reducer.reduce(state: &state, input: Envelope(event, payload: input))
    }

    /// Moves the clock the next inputs are committed at.
    public mutating func advance(by duration: Duration) {
        now = now + duration
    }
}
