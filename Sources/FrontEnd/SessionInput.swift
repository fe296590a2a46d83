import Bus
import EventLog
import TerminalUI

/// Everything that changes the front-end's state: a key, the terminal resized or closed, what
/// the subscription delivers or why it ended, what a ping or a publish came back with.
/// ``Coordinator/handle(_:in:)`` takes each, so that every change to the state is one pure step,
/// tested without a terminal or a bus.
public enum SessionInput: Sendable {
    /// The session has begun: it follows the bus from the start of the log.
    case started
    case key(Key)
    /// The terminal now has this size.
    case resized(TerminalSize)
    /// The terminal went away: the session ends.
    case terminalClosed
    /// A command URL to send, under the request id `id` the session chose for it
    /// (``Effect/dispatch(_:)``); `traceParent` is the root span of the request's trace, when
    /// the session started one, and `id` is then the trace's id.
    case dispatched(String, id: EventID, traceParent: UInt64? = nil)
    /// An item of the subscription: an event, the read having caught up, the link coming or going.
    case delivered(SubscriptionEvent)
    /// The subscription failed (or ended); the front-end subscribes again after a backoff.
    case subscriptionEnded(problem: String)
    /// The bus refused to read after `position`, the last event shown, because its log ends at
    /// `head` (daemon epoch `epoch`): not the log the front-end read. It stops following.
    case aheadOfLog(position: UInt64, head: UInt64, epoch: UInt64)
    /// The answer to a ping: the bus's head, or why there was none.
    case pinged(head: UInt64?, problem: String?)
    /// A request the bus did not take.
    case publishFailed(EventID, reason: String)
}
