import EventLog
import Guards

/// W3C trace context as it crosses the bus.
///
/// A `traceparent` header has four parts: version, trace id, parent id and flags. On the bus
/// the trace id is derived, not carried: it is the chain's correlation id (both are 16 bytes
/// naming one user action, so `bureau trace` and a tracing backend use the same id). The parent
/// id is carried, in the envelope's `trace_parent`: the span of the producer that published the
/// event. The sampled flag is derived from that field's presence (a producer writes it only for
/// a sampled span), and the version is 00. An event is traced exactly when it carries a parent.
public struct TraceParent: Sendable, Hashable, CustomStringConvertible {
    /// The trace: the correlation id of the chain.
    public var traceID: EventID
    /// The span that published the event: the parent of every span it causes.
    public var spanID: UInt64

    public init(traceID: EventID, spanID: UInt64) {
        self.traceID = traceID
        self.spanID = spanID
    }

    /// The context `event` carries, nil if it carries none.
    public init?(of event: StoredEvent) {
        guard event.traceParent != 0 else { return nil }
        self.init(traceID: event.correlation == .zero ? event.id : event.correlation, spanID: event.traceParent)
    }

    /// Parses a `traceparent` header of version 00; nil if it is not one, names no span, or is
    /// not sampled (nothing of an unsampled trace crosses the bus).
    public init?(header: String) {
        let parts = header.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].elementsEqual("00".utf8), parts[1].count == 32, parts[2].count == 16,
            parts[3].count == 2, let flags = Hexadecimal.value(parts[3]), flags & 1 == 1,
            let high = Hexadecimal.value(parts[1].prefix(16)), let low = Hexadecimal.value(parts[1].suffix(16)),
            let span = Hexadecimal.value(parts[2]), span != 0, high | low != 0
        else { return nil }
        self.init(traceID: EventID(high: high, low: low), spanID: span)
    }

    /// The `traceparent` header: `00-<trace id>-<span id>-01`, in lowercase hexadecimal.
    public var header: String {
        "00-" + Hexadecimal.digits(traceID.high) + Hexadecimal.digits(traceID.low) + "-" + Hexadecimal.digits(spanID)
            + "-01"
    }

    /// The trace id as tracing backends show it: 32 hexadecimal digits.
    public var traceHex: String { Hexadecimal.digits(traceID.high) + Hexadecimal.digits(traceID.low) }

    public var description: String { header }
}
