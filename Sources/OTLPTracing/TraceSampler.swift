/// Which traces are sampled, as OpenTelemetry's `OTEL_TRACES_SAMPLER` names them: a span with a
/// parent follows its parent's decision when the sampler is parent-based (the default), and a
/// root is decided by the rule.
public struct TraceSampler: Sendable, Equatable {
    public enum Rule: Sendable, Equatable {
        case always
        case never
        /// Traces whose id's low 8 bytes, read as a number, fall in the first `ratio` of the range.
        case ratio(Double)
    }

    public var root: Rule
    public var followsParent: Bool

    public init(root: Rule, followsParent: Bool) {
        self.root = root
        self.followsParent = followsParent
    }

    /// OpenTelemetry's default: `parentbased_always_on`.
    public static let parentBasedAlwaysOn = TraceSampler(root: .always, followsParent: true)

    /// Whether a span of the trace `traceLow` names, with `parent`, is sampled.
    public func samples(traceLow: UInt64, parent: SpanIdentity?) -> Bool {
        if followsParent, let parent { return parent.sampled }
        switch root {
        case .always: return true
        case .never: return false
        case .ratio(let ratio):
            guard ratio < 1 else { return true }
            guard ratio > 0 else { return false }
            return Double(traceLow) < ratio * 18_446_744_073_709_551_616.0
        }
    }
}
