import Bus
import EventLog
import Tracing

/// The trace of one user action at the process that sends it (`bureau send`, the front-end):
/// the root span, from the moment a command URL is sent until its answer is back.
///
/// The request is published under the trace's id, so that its id, the chain's correlation and
/// the trace id are one (``TraceParent``): the tracer drew it at random, as ``EventID/random()``
/// would have. Every hop of the chain continues the trace from the envelope of its input.
public final class CommandTrace: Sendable {
    private let span: any Span
    /// The trace's id: the request's id, and so the chain's correlation.
    public let id: EventID
    /// The root span's id: the trace parent the request carries.
    public let spanID: UInt64

    private init(span: any Span, parent: TraceParent) {
        self.span = span
        id = parent.traceID
        spanID = parent.spanID
    }

    /// Starts the trace of sending `command` (named by its module and name, never its
    /// arguments); nil when tracing is off or the tracer does not sample it.
    public static func start(_ command: CommandSpec) -> CommandTrace? {
        guard BusTracing.isOn else { return nil }
        let span = Tracing.startSpan("send \(command.module)/\(command.name)", context: .topLevel, ofKind: .producer)
        guard let parent = BusTracing.parent(of: span.context) else {
            span.end()
            return nil
        }
        span.attributes.set("messaging.system", value: .string("bureau"))
        span.attributes.set("messaging.operation.type", value: .string("send"))
        span.attributes.set("bureau.command", value: .string("\(command.module)/\(command.name)"))
        return CommandTrace(span: span, parent: parent)
    }

    /// `request` as the trace publishes it: under the trace's id, carrying the root span.
    public func traced(_ request: OutgoingEvent) -> OutgoingEvent {
        var request = request
        request.id = id
        request.correlation = id
        request.traceParent = spanID
        return request
    }

    /// Notes that `event` (an answer or an outcome) is back at the sender: a span from its
    /// commit until now, a child of the span that published it. The action's own span goes on
    /// until ``end()``.
    public func received(_ event: StoredEvent) {
        guard
            let arrival = BusTracing.startSpan(
                "receive \(event.type)", continuing: event, at: BusTracing.instant(of: event.commitTime))
        else { return }
        arrival.attributes.set("messaging.operation.type", value: .string("receive"))
        arrival.end()
    }

    /// Marks the action failed, for `reason` (what the sender says went wrong, never an event's
    /// payload).
    public func fail(_ reason: String) {
        span.setStatus(SpanStatus(code: .error, message: reason))
    }

    /// Ends the action's span, once.
    public func end() {
        span.end()
    }
}
