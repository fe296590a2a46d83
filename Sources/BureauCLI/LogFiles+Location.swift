import Bus
import EventLog
import Foundation
import Guards
import LogTools

extension LogFiles {
    /// ``LogFiles/scan(directory:from:to:fileSystem:warn:_:)`` on a deployment's log, warnings
    /// to standard error.
    static func scan(
        in location: BusLocation, from: UInt64 = 1, to: UInt64? = nil, _ body: (StoredEvent, LogRecord) throws -> Bool
    ) throws {
        try scan(directory: location.logDirectory, from: from, to: to, warn: printWarning, body)
    }

    /// ``LogFiles/forEach(directory:from:to:warn:_:)`` on a deployment's log, warnings to standard error.
    static func forEach(
        in location: BusLocation, from: UInt64 = 1, to: UInt64? = nil, _ body: (StoredEvent) throws -> Void
    ) throws {
        try forEach(directory: location.logDirectory, from: from, to: to, warn: printWarning, body)
    }
}

/// Prints a warning line to standard error, its control characters escaped as ``print(_:separator:terminator:)``
/// escapes them (a warning can name what a log holds).
func printWarning(_ message: String) {
    FileHandle.standardError.write(Data("warning: \(TerminalText.escaped(message, keepingLineBreaks: true))\n".utf8))
}
