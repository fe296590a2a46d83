import BureauSchemas
import Bus
import EventLog
import Logging
import ServiceLifecycle

/// How a ``ReducerHost`` runs.
public struct ReducerHostOptions: Sendable {
    /// A snapshot every this many inputs (and after catching up, and on shutdown).
    public var snapshotEvery = 10_000

    public init() {}
}
