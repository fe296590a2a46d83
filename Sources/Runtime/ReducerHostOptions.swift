import BureauSchemas
import Bus
import EventLog
import Guards
import Logging
import ServiceLifecycle

/// How a ``ReducerHost`` runs.
public struct ReducerHostOptions: Sendable {
    /// A snapshot every this many inputs (and after catching up, and on shutdown).
    public var snapshotEvery = 10_000
    /// How long after a failed snapshot save the next is tried (at the first input after it,
    /// or at shutdown): a store that is away is not asked at every input.
    public var snapshotRetry = Backoff(initial: .milliseconds(200), maximum: .seconds(30))

    public init() {}
}
