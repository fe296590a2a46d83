import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension EventLogReader {
    /// Calls `body` with each event from `from` through `through` and its record, a page at a
    /// time; `body` returns false to stop. Throws if the log ends before `through` or a record
    /// is not an envelope, so that a tool never stops early and exits 0.
    public func scan(
        from: UInt64 = 1, through: UInt64, _ body: (StoredEvent, LogRecord) throws -> Bool
    ) throws {
        var after = max(from, 1) - 1
        while after < through {
            let page = try read(after: after, through: through, limit: 1000, maxBytes: 4 << 20)
            guard let last = page.last else {
                throw LogToolError("the log ends at position \(after), before position \(through)")
            }
            for record in page {
                guard try body(try StoredEvent(decoding: record), record) else { return }
            }
            after = last.position
        }
    }
}
