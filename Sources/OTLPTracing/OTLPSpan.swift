import Synchronization
import Tracing

/// A span of ``OTLPTracer``: recording when its trace is sampled, handed to the exporter when it
/// ends (once; what is done to it afterwards is ignored).
public final class OTLPSpan: Span, Sendable {
    public let context: InstrumentationContext
    let identity: SpanIdentity
    let parentSpanID: UInt64
    let kind: SpanKind
    let startNanos: UInt64
    /// Nil when the trace is not sampled: the span records nothing.
    private let exporter: OTLPSpanExporter?
    private let state: Mutex<State>

    private struct State {
        var name: String
        var attributes: SpanAttributes = [:]
        var status: SpanStatus?
        var events: [SpanEvent] = []
        var links: [(identity: SpanIdentity, attributes: SpanAttributes)] = []
        var ended = false
    }

    init(
        name: String, context: InstrumentationContext, identity: SpanIdentity, parentSpanID: UInt64,
        kind: SpanKind, startNanos: UInt64, exporter: OTLPSpanExporter?
    ) {
        self.context = context
        self.identity = identity
        self.parentSpanID = parentSpanID
        self.kind = kind
        self.startNanos = startNanos
        self.exporter = exporter
        state = Mutex(State(name: name))
    }

    public var operationName: String {
        get { state.withLock { $0.name } }
        set { update { $0.name = newValue } }
    }

    public var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set { update { $0.attributes = newValue } }
    }

    public var isRecording: Bool { exporter != nil && !state.withLock { $0.ended } }

    /// OpenTelemetry's rule: once ok, a status stays ok.
    public func setStatus(_ status: SpanStatus) {
        update { state in
            if state.status?.code != .ok { state.status = status }
        }
    }

    public func addEvent(_ event: SpanEvent) {
        update { $0.events.append(event) }
    }

    public func recordError<Instant: TracerInstant>(
        _ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant
    ) {
        var event = SpanEvent(name: "exception", at: instant(), attributes: attributes)
        event.attributes.set("exception.type", value: .string(String(reflecting: type(of: error))))
        event.attributes.set("exception.message", value: .string("\(error)"))
        addEvent(event)
    }

    public func addLink(_ link: SpanLink) {
        guard let identity = link.context.spanIdentity else { return }
        update { $0.links.append((identity, link.attributes)) }
    }

    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        guard let exporter else { return }
        let endNanos = instant().nanosecondsSinceEpoch
        let finished: FinishedSpan? = state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            return FinishedSpan(
                identity: identity, parentSpanID: parentSpanID, name: state.name, kind: kind, startNanos: startNanos,
                endNanos: max(endNanos, startNanos), attributes: state.attributes, status: state.status,
                events: state.events, links: state.links)
        }
        if let finished { exporter.add(finished) }
    }

    /// Changes a recording span's state; nothing once it ended or when it does not record.
    private func update(_ change: (inout State) -> Void) {
        guard exporter != nil else { return }
        state.withLock { state in
            if !state.ended { change(&state) }
        }
    }
}
