import Bus
import EventLog
import Runtime

/// What handling an input asks the outside world to do; the coordinator itself does nothing.
/// ``LiveSession`` performs each, in order.
public enum Effect: Sendable, Equatable {
    /// Route this command URL and publish the request it becomes: the session starts the
    /// request's trace when tracing is on (``CommandTrace``), picks the request's id (the
    /// trace's, when traced) and hands them back as ``SessionInput/dispatched(_:id:traceParent:)``,
    /// which records the request and says what to publish.
    case dispatch(String)
    /// Publish this request (recorded as pending under its id).
    case publish(OutgoingEvent)
    /// Take this step in the trace of the request with this id, which the session started when
    /// it dispatched the request. Nothing, when the session has no such trace.
    case trace(EventID, TraceStep)
    /// Draw the next frame in full, not as the difference from the last: what the terminal
    /// shows is no longer known (it changed size).
    case repaint
    case quit
    /// Subscribe to every event after `position`, once `delay` has passed.
    case subscribe(after: UInt64, delay: Duration)

    /// Dispatches a URL built by a command's typed builder.
    public static func dispatch(_ url: CommandURL) -> Effect { .dispatch(url.text) }

    /// What to do with a traced request's span (``CommandTrace``), from its dispatch until its
    /// last answer is back.
    public enum TraceStep: Sendable, Equatable {
        /// `event`, an answer or an outcome of the request, is back at the sender: a span from
        /// its commit until now. The request's own span goes on.
        case receive(StoredEvent)
        /// End the request's span: it is over. Marked failed, for `failure` (never an event's
        /// payload), when there is one.
        case end(failure: String?)
    }
}
