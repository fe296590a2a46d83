import Bus
import EventLog
import Foundation
import Logging

/// A new log built in a data directory that must be new or empty, for `log import` and
/// `log pull`: written aside and moved into place only once it is whole, so that a failure
/// half way leaves nothing behind.
enum NewLog {
    /// Makes the log aside, lets `fill` append to it, and moves it into `location`'s log
    /// directory; returns what `fill` returns (how many events it wrote).
    static func build(in location: BusLocation, _ fill: (FileEventLog) async throws -> UInt64) async throws -> UInt64 {
        let manager = FileManager.default
        let existed = manager.fileExists(atPath: location.dataDirectory)
        if existed {
            let entries = try manager.contentsOfDirectory(atPath: location.dataDirectory)
            guard entries.isEmpty else {
                throw CLIError("the data directory \(location.dataDirectory) is not empty; use a new directory")
            }
        }
        try OwnerOnly.makeDirectory(location.dataDirectory)
        let staging = location.dataDirectory + "/.log-building"
        do {
            var options = FileEventLog.Options()
            options.durability = .always
            // The log's own messages (opened, recovered) mean nothing for a log being created.
            let quiet = Logger(label: "bureau.new-log") { _ in SwiftLogNoOpLogHandler() }
            let log = try FileEventLog(directory: staging, options: options, logger: quiet)
            let count: UInt64
            do {
                count = try await fill(log)
                try log.close()
            } catch {
                // The failure is what is said; a log that also fails to close is removed below.
                try? log.close()
                throw error
            }
            try manager.moveItem(atPath: staging, toPath: location.logDirectory)
            return count
        } catch {
            // What could not be cleared away is said with the failure: the next attempt needs an
            // empty directory.
            var left: [String] = []
            for path in [staging] + (existed ? [] : [location.dataDirectory]) where manager.fileExists(atPath: path) {
                do { try manager.removeItem(atPath: path) } catch { left.append("\(path) (\(error))") }
            }
            guard left.isEmpty else {
                throw CLIError(
                    "\(error); and this could not be removed, remove it by hand: \(left.joined(separator: ", "))")
            }
            throw error
        }
    }
}
