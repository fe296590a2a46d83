import Bus
import EventLog
import Foundation

/// Reads the log's segment files directly, without the bus.
enum LogFiles {
    /// Calls `body` with each event from `from` through `to`, decoded.
    static func forEach(
        in location: BusLocation, from: UInt64 = 1, to: UInt64? = nil, _ body: (StoredEvent) throws -> Void
    ) throws {
        let directory = location.logDirectory
        guard FileManager.default.fileExists(atPath: directory) else {
            throw CLIError("there is no log in \(directory); start `bureau bus` or pass --data")
        }
        let cursor = try LogCursor(directory: directory, after: from - 1, limit: to)
        while let record = try cursor.next() {
            do {
                try body(try StoredEvent(envelopeBytes: record.body))
            } catch let error as BusError {
                throw CLIError("position \(record.position): \(error)")
            }
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
