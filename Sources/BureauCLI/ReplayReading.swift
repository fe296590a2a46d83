import ArgumentParser
import Bus
import EventLog
import Foundation
import LogTools
import Runtime

/// Reads the log for replay: from position 1, up to a position or a commit time.
enum ReplayReading {
    /// Calls `body` with each event up to `to` and committed at or before `until`; `body`
    /// returns false to stop early.
    static func scan(
        in source: LogSource, to: UInt64?, until: CommitTime?, _ body: (StoredEvent) throws -> Bool
    ) async throws {
        try await source.scanEvents(to: to) { event in
            // Commit times never go backwards, so the first one past the limit ends the range.
            if let until, event.commitTime > until { return false }
            return try body(event)
        }
    }

    /// The same, for a body that always continues.
    static func forEach(
        in source: LogSource, to: UInt64?, until: CommitTime?, _ body: (StoredEvent) throws -> Void
    ) async throws {
        try await scan(in: source, to: to, until: until) { event in
            try body(event)
            return true
        }
    }
}
