import BureauSchemas
import Bus
import EventLog

/// Re-runs reducers over their recorded inputs and checks that they produce the recorded
/// outputs: type, payload, id, causation and correlation. Like Temporal's replayer, it is how
/// a changed reducer is checked against real history.
///
/// Feed it every event of the log in order with ``check(_:)``; it answers the first
/// divergence it sees, then ``finish()`` at the end. Outputs are matched by their derived id.
/// A host publishes a module's outputs in the order of their inputs, so a re-computed output
/// that is not in the log before a later output of the same module is a divergence too; the
/// outputs of the last inputs, after the module's last recorded output, may not be published
/// yet (a host that is behind or stopped) and are only counted, as ``ModuleCount/unpublished``.
public final class ReplayVerifier {
    private var modules: [ModuleCheck]

    /// A verifier of these reducers, each from its initial state (the log from position 1).
    public init(reducers: [any Reducer]) {
        modules = reducers.map { ModuleCheck(AnyReducerReplay.of($0)) }
    }

    /// Checks one event, in log order; the divergence it reveals, if any.
    public func check(_ event: StoredEvent) -> ReplayDivergence? {
        for module in modules {
            if let divergence = module.check(event) { return divergence }
        }
        return nil
    }

    /// What was compared so far, per module.
    public var counts: [ModuleCount] { modules.map(\.count) }

    /// Verifies a whole sequence of events: the first divergence, or nil, and the counts.
    public static func verify(
        reducers: [any Reducer], events: some Sequence<StoredEvent>
    ) -> (divergence: ReplayDivergence?, counts: [ModuleCount]) {
        let verifier = ReplayVerifier(reducers: reducers)
        for event in events {
            if let divergence = verifier.check(event) { return (divergence, verifier.counts) }
        }
        return (nil, verifier.counts)
    }

    /// Inputs and outputs compared for one module.
    public struct ModuleCount: Sendable, Equatable {
        public let module: String
        /// Inputs re-applied.
        public var inputs = 0
        /// Recorded outputs found equal to the re-computed ones.
        public var outputsCompared = 0
        /// Inputs whose payload does not decode, or whose upcaster failed (answered by an ErrorRaised).
        public var malformedInputs = 0
        /// The first of them: its position and why ("position 7: … FailingUpcaster failed: …").
        public var firstMalformed: String?
        /// Re-computed outputs of the last inputs that are not in the log (yet).
        public var unpublished = 0
    }
}
