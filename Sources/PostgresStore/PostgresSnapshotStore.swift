import EventLog
import Logging
import Metrics

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reducer snapshots in the store's database (`bureau_snapshots`, one row per module), so
/// that a reducer restarted on another host resumes from its snapshot instead of the log's
/// start. The bytes are those a snapshot file holds (header with checksum, then JSON): a row
/// damaged by hand is refused with a reason and the state rebuilt from the log.
///
/// A store that fails over is followed: a statement whose connection ended runs again on a new
/// connection to whichever host of the URL now accepts writes, and while none does, loads and
/// saves fail (at once, until the next attempt is due) for the host to retry
/// (``ReconnectingSession``). Replacing a row twice is harmless.
public final class PostgresSnapshotStore: SnapshotStore, @unchecked Sendable {
    /// The largest snapshot read; a larger one is ignored with a reason.
    public static let maxBytes = 256 << 20
    private let session: ReconnectingSession

    /// Connects (retrying a server that does not answer for `wait`) and creates the tables if missing.
    ///
    /// - Parameter metricsFactory: where its reconnections are counted; swift-metrics'
    ///   bootstrapped factory unless a test gives its own.
    public init(
        url: PostgresStoreURL, wait: Duration = .seconds(30), metricsFactory: (any MetricsFactory)? = nil,
        logger: Logger
    ) throws {
        session = try ReconnectingSession(
            url, wait: wait, reconnects: PostgresStoreMetrics.reconnects("snapshots", factory: metricsFactory),
            logger: logger)
        try session.run("preparing the schema") { try PostgresSchema.prepare($0) }
    }

    public func load<State: Codable & Sendable>(
        _ type: State.Type, module: String, stateVersion: Int, rejected: (String) -> Void
    ) -> Snapshot<State>? {
        let rows: [PostgresRow]
        do {
            let what = "reading the snapshot of \(module)"
            rows = try session.run(what) {
                try $0.query(
                    """
                    SELECT CASE WHEN octet_length(state) <= \(Self.maxBytes) THEN state END, octet_length(state)
                    FROM bureau_snapshots WHERE module = \(module)
                    """, what: what)
            }
        } catch {
            rejected("\(error)")
            return nil
        }
        guard let row = rows.first else { return nil }
        let bytes: Data?
        let length: Int64
        do {
            (bytes, length) = (try row.optionalBytes(0), try row.integer(1))
        } catch {
            rejected("the snapshot row of \(module) is not readable: \(error)")
            return nil
        }
        guard let bytes else {
            rejected("the snapshot of \(module) is \(length) bytes, over the limit of \(Self.maxBytes)")
            return nil
        }
        switch SnapshotCoding.decode(bytes, as: type, module: module, stateVersion: stateVersion) {
        case .success(let snapshot): return snapshot
        case .failure(let rejection):
            rejected("bureau_snapshots, module \(module): \(rejection.reason)")
            return nil
        }
    }

    /// One statement: the row is replaced whole or not at all. Throws when the store cannot be
    /// reached; the caller tries again later (a snapshot only shortens a restart).
    public func save<State: Codable & Sendable>(_ snapshot: Snapshot<State>) throws {
        let bytes = try SnapshotCoding.encode(snapshot)
        let what = "saving the snapshot of \(snapshot.module)"
        try session.run(what) {
            try $0.query(
                """
                INSERT INTO bureau_snapshots (module, position, state) VALUES (\(snapshot.module), \(Int64(clamping: snapshot.position)), \(bytes))
                ON CONFLICT (module) DO UPDATE SET position = excluded.position, state = excluded.state, written_at = now()
                """, what: what)
        }
    }
}
