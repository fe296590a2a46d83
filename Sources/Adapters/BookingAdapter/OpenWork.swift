import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Logging
import Runtime
import ServiceLifecycle
import Synchronization

/// Accepted events without an outcome yet, and the checkpoint they allow: every event before
/// the oldest open one is done.
final class OpenWork: Sendable {
    private struct State {
        var open: Set<UInt64> = []
        var seen: UInt64
        var saved: UInt64
    }

    private let state: Mutex<State>

    init(start: UInt64) {
        state = Mutex(State(seen: start, saved: start))
    }

    /// Marks an event that asks for no work as seen: everything up to it is done once the work
    /// before it is.
    func saw(_ position: UInt64) { state.withLock { $0.seen = max($0.seen, position) } }

    /// Marks the event of a work seen and its work open, in one step: a checkpoint taken between
    /// the two (another work finishing) would pass work not yet done, and a restart on it would
    /// never do that work.
    func open(_ position: UInt64) {
        state.withLock { state in
            state.open.insert(position)
            state.seen = max(state.seen, position)
        }
    }
    func finishWithoutWork(_ position: UInt64) { state.withLock { _ = $0.open.remove(position) } }

    /// Closes a position; returns a new checkpoint to save, if it moved.
    func finish(_ position: UInt64) -> UInt64? {
        state.withLock { state in
            state.open.remove(position)
            let checkpoint = state.open.min().map { $0 - 1 } ?? state.seen
            guard checkpoint > state.saved else { return nil }
            state.saved = checkpoint
            return checkpoint
        }
    }
}
