import Guards
import Tracing

/// Who a span is in its trace: the trace's 16-byte id, the span's 8-byte id, and whether the
/// trace is sampled (its spans exported). It travels in an ``InstrumentationContext`` and, between
/// processes, as a W3C `traceparent` header.
public struct SpanIdentity: Sendable, Hashable {
    /// The trace id's high and low halves (big-endian: `high` is the first 8 bytes); never zero.
    public var traceHigh: UInt64
    public var traceLow: UInt64
    /// Never zero.
    public var spanID: UInt64
    public var sampled: Bool

    public init(traceHigh: UInt64, traceLow: UInt64, spanID: UInt64, sampled: Bool) {
        self.traceHigh = traceHigh
        self.traceLow = traceLow
        self.spanID = spanID
        self.sampled = sampled
    }

    /// The W3C `traceparent` header: version 00, trace id, span id, flags.
    public var traceparent: String {
        "00-\(Hexadecimal.digits(traceHigh))\(Hexadecimal.digits(traceLow))-\(Hexadecimal.digits(spanID))-\(sampled ? "01" : "00")"
    }

    /// Reads a `traceparent` header (W3C Trace Context, version 00, or a later version's first four
    /// fields); nil for anything else, an all-zero trace or span id included.
    public init?(traceparent header: String) {
        let fields = header.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count >= 4, fields[0].count == 2, fields[0] != "ff",
            fields[0] != "00" || fields.count == 4,
            fields[1].count == 32, fields[2].count == 16, fields[3].count == 2,
            let high = Self.number(fields[1].prefix(16)), let low = Self.number(fields[1].suffix(16)),
            let span = Self.number(fields[2]), let flags = Self.number(fields[3]),
            Self.number(fields[0]) != nil, high != 0 || low != 0, span != 0
        else { return nil }
        self.init(traceHigh: high, traceLow: low, spanID: span, sampled: flags & 1 == 1)
    }

    /// Lowercase hexadecimal only, as the header must be written.
    private static func number(_ text: Substring) -> UInt64? {
        Hexadecimal.value(text.utf8, lowercaseOnly: true)
    }
}

/// The key under which a context holds its span's identity.
enum SpanIdentityKey: ServiceContextKey {
    typealias Value = SpanIdentity
}

extension InstrumentationContext {
    /// The identity of the span this context is in, if any (local, or the remote parent of a
    /// `traceparent` extracted).
    public var spanIdentity: SpanIdentity? {
        get { self[SpanIdentityKey.self] }
        set { self[SpanIdentityKey.self] = newValue }
    }
}
