import EventLog
import Logging
import Metrics

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads a ``PostgresEventLog``'s events in position order, on a connection of its own.
///
/// A read whose connection ended is made again on a new connection, to whichever host of the
/// URL now accepts writes (``ReconnectingSession``): a tool reading through a failover goes on
/// where it was. Reads of committed events give the same records on any server that has them.
public final class PostgresLogReader: EventLogReader, @unchecked Sendable {
    private let session: ReconnectingSession
    private let reconnectWait: Duration

    /// - Parameters:
    ///   - wait: how long to keep trying a server that does not answer at first.
    ///   - reconnectWait: how long a read keeps trying, once connected, a store that cannot be
    ///     reached (a promotion under way). Zero for a caller that recovers by itself (the daemon).
    ///   - metricsFactory: where its reconnections are counted; swift-metrics' bootstrapped
    ///     factory unless a test gives its own.
    public init(
        url: PostgresStoreURL, wait: Duration = .zero, reconnectWait: Duration = .zero,
        metricsFactory: (any MetricsFactory)? = nil, logger: Logger
    ) throws {
        session = try ReconnectingSession(
            url, wait: wait, reconnects: PostgresStoreMetrics.reconnects("log-reader", factory: metricsFactory),
            logger: logger)
        self.reconnectWait = reconnectWait
    }

    /// The position of the newest event; 0 when there is none.
    public func head() throws -> UInt64 {
        let rows = try session.run("reading the head", wait: reconnectWait) {
            try $0.query("SELECT coalesce(max(position), 0) FROM bureau_events", what: "reading the head")
        }
        return try rows.first?.position(0) ?? 0
    }

    /// Records in position order; the byte budget counts whole bodies and always lets the first through.
    public func read(after position: UInt64, through: UInt64, limit: Int, maxBytes: Int) throws -> [LogRecord] {
        guard through > position, limit > 0 else { return [] }
        let after = Int64(clamping: position)
        let last = Int64(clamping: through)
        // The running total is computed by the server, so that a budget of a few bytes never
        // brings a thousand large bodies over the network.
        let what = "reading events after position \(position)"
        let rows = try session.run(what, wait: reconnectWait) {
            try $0.query(
                """
                SELECT position, id, body FROM (
                    SELECT position, id, body, sum(octet_length(body)) OVER (ORDER BY position) AS total
                    FROM bureau_events WHERE position > \(after) AND position <= \(last)
                    ORDER BY position LIMIT \(min(limit, 100_000))) AS page
                WHERE total - octet_length(body) < \(Int64(max(maxBytes, 1))) OR position = \(after + 1)
                ORDER BY position
                """, what: what)
        }
        var records: [LogRecord] = []
        records.reserveCapacity(rows.count)
        var expected = position + 1
        for row in rows {
            let record = try Self.record(row)
            // Positions are the primary key and the one writer leaves no holes; a hole means
            // rows were deleted by hand, which a reader must not hide.
            guard record.position == expected else {
                throw EventLogError.missingPositions(
                    after: expected - 1, segment: "bureau_events", startsAt: record.position)
            }
            records.append(record)
            expected += 1
        }
        return records
    }

    static func record(_ row: PostgresRow) throws -> LogRecord {
        LogRecord(position: try row.position(0), id: EventID(try row.uuid(1)), body: try row.bytes(2))
    }
}
