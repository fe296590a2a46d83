import EventLog
import Synchronization
import Tracing

/// Whether this process traces, and the spans that continue a trace an event carries.
///
/// Libraries trace through swift-distributed-tracing only (``InstrumentationSystem``); a
/// process's entry point bootstraps a tracer (swift-otel, exporting over OTLP) and then calls
/// ``turnOn()``. Until then every check is one relaxed atomic load: no span, no context, no
/// header is made, and what a producer writes is what it wrote before tracing existed.
public enum BusTracing {
    private static let on = Atomic<Bool>(false)

    /// Whether spans are made in this process.
    public static var isOn: Bool { on.load(ordering: .relaxed) }

    /// Makes spans from now on, through the tracer bootstrapped in ``InstrumentationSystem``.
    public static func turnOn() { on.store(true, ordering: .relaxed) }

    /// Makes no more spans (for tests that turned it on).
    public static func turnOff() { on.store(false, ordering: .relaxed) }

    /// The context of a span whose parent is `parent`: its `traceparent` header, extracted by
    /// the instrument bootstrapped (W3C propagation, the bus being the carrier).
    public static func context(continuing parent: TraceParent) -> InstrumentationContext {
        var context = InstrumentationContext.topLevel
        InstrumentationSystem.instrument.extract(parent.header, into: &context, using: TraceParentExtractor())
        return context
    }

    /// What an event published inside `context`'s span carries: the span's trace and id, nil
    /// when there is no span or it is not sampled.
    public static func parent(of context: InstrumentationContext) -> TraceParent? {
        var header: String?
        InstrumentationSystem.instrument.inject(context, into: &header, using: TraceParentInjector())
        return header.flatMap(TraceParent.init(header:))
    }

    /// What an event published now carries: the span of the task's current context, if any.
    public static func currentParent() -> TraceParent? {
        guard isOn, let context = InstrumentationContext.current else { return nil }
        return parent(of: context)
    }

    /// Starts a span whose parent is the span that published `event`; nil when tracing is off
    /// or the event carries no trace. The caller ends it.
    public static func startSpan(
        _ name: String, continuing event: StoredEvent, ofKind kind: SpanKind = .consumer,
        at instant: DefaultTracerClock.Instant = DefaultTracerClock.now
    ) -> (any Span)? {
        guard isOn, let parent = TraceParent(of: event) else { return nil }
        let span = Tracing.startSpan(name, at: instant, context: context(continuing: parent), ofKind: kind)
        span.attributes.set(event: event)
        return span
    }

    /// The instant `time` names, for a span that began before it was started (an event's commit).
    public static func instant(of time: CommitTime) -> DefaultTracerClock.Instant {
        DefaultTracerClock.Instant(
            nanosecondsSinceEpoch: UInt64(clamping: time.seconds) &* 1_000_000_000 &+ UInt64(clamping: time.nanos))
    }
}

extension SpanAttributes {
    /// What a span says of the event it handles: its type, position and id, following
    /// OpenTelemetry's messaging conventions. Never its payload.
    public mutating func set(event: StoredEvent) {
        set("messaging.system", value: .string("bureau"))
        set("messaging.destination.name", value: .string(event.type))
        set("messaging.message.id", value: .string(event.id.description))
        set("bureau.position", value: .int64(Int64(clamping: event.position)))
    }
}

/// Reads the `traceparent` header from a carrier that is just that header.
struct TraceParentExtractor: Extractor {
    func extract(key: String, from carrier: String) -> String? {
        key == "traceparent" ? carrier : nil
    }
}

/// Writes the `traceparent` header into a carrier that is just that header.
struct TraceParentInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout String?) {
        if key == "traceparent" { carrier = value }
    }
}
