import Tracing

/// A span once it ended: what an export carries.
struct FinishedSpan: Sendable {
    var identity: SpanIdentity
    /// Zero for a root.
    var parentSpanID: UInt64
    var name: String
    var kind: SpanKind
    var startNanos: UInt64
    var endNanos: UInt64
    var attributes: SpanAttributes
    var status: SpanStatus?
    var events: [SpanEvent]
    var links: [(identity: SpanIdentity, attributes: SpanAttributes)]
}
