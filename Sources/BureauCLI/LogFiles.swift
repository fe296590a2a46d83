import Bus
import EventLog
import Foundation

/// Reads the log's segment files directly, without the bus.
enum LogFiles {
    /// Calls `body` with each event from `from` through `to`, decoded, and its record (the
    /// envelope bytes as stored); `body` returns false to stop early. A record that does not
    /// decode is an error naming its position.
    static func scan(
        in location: BusLocation, from: UInt64 = 1, to: UInt64? = nil,
        _ body: (StoredEvent, LogRecord) throws -> Bool
    ) throws {
        let directory = location.logDirectory
        guard FileManager.default.fileExists(atPath: directory) else {
            throw CLIError("there is no log in \(directory); start `bureau bus` or pass --data")
        }
        let cursor = try LogCursor(directory: directory, after: from - 1, limit: to)
        while let record = try cursor.next() {
            let event: StoredEvent
            do {
                event = try StoredEvent(envelopeBytes: record.body)
            } catch {
                throw CLIError("position \(record.position): \(error)")
            }
            guard try body(event, record) else { return }
        }
    }

    /// Calls `body` with each event from `from` through `to`, decoded.
    static func forEach(
        in location: BusLocation, from: UInt64 = 1, to: UInt64? = nil, _ body: (StoredEvent) throws -> Void
    ) throws {
        try scan(in: location, from: from, to: to) { event, _ in
            try body(event)
            return true
        }
    }

    /// The size of the segment files.
    static func bytes(in location: BusLocation) -> Int64 {
        let directory = location.logDirectory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".seg") }.reduce(0) { total, name in
            let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size]) as? Int64
            return total + (size ?? 0)
        }
    }
}
