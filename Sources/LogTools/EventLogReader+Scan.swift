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
        var page: ArraySlice<LogRecord> = []
        var names = TypeNameCache()
        // Fetching and decoding run a few chunks ahead on a thread of their own.
        let next = { () throws -> (StoredEvent, LogRecord)? in
            if page.isEmpty {
                guard after < through else { return nil }
                let fetched = try self.read(after: after, through: through, limit: 1000, maxBytes: 4 << 20)
                guard let last = fetched.last else {
                    throw LogToolError("the log ends at position \(after), before position \(through)")
                }
                page = fetched[...]
                after = last.position
                // Strings shared within a page of 1,000 (a chunk holds 2,048), so mostly not with
                // what the caller holds (see LogFiles.readPart).
                names = TypeNameCache()
            }
            let record = page.removeFirst()
            return (try StoredEvent(decoding: record, names: &names), record)
        }
        try ReadAhead.forEach(weight: { $0.1.body.count }, next: next) { try body($0.0, $0.1) }
    }
}
