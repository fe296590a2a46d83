import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import LogTools
import Logging
import Runtime

struct LogImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Build a new log from JSON lines that `bureau log export` wrote.",
        discussion: HelpText.prose(
            """
            Reproduces every event as it was committed: position, id, type, payload, producer, \
            causation, correlation and commit time, so that `bureau replay` on the new data \
            directory gives the same states. The "envelope" field is used when present; a line \
            without one (written by hand) is built from its other fields.

            The excerpt must start at position 1 and have no holes: a log always does. The data \
            directory must be new or empty. On bad input it names the line and writes nothing:
            the log is built aside and moved into place only when every line has been read.

            Examples:
              bureau log import excerpt.jsonl --data ./repro
              bureau replay --verify --data ./repro
            """)
    )

    @Argument(help: "The JSON lines file, or - for standard input.") var file: String
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let location = global.location
        let manager = FileManager.default
        let existed = manager.fileExists(atPath: location.dataDirectory)
        if existed {
            let entries = try manager.contentsOfDirectory(atPath: location.dataDirectory)
            guard entries.isEmpty else {
                throw CLIError(
                    "the data directory \(location.dataDirectory) is not empty; import into a new directory")
            }
        }
        let handle: FileHandle
        if file == "-" {
            handle = .standardInput
        } else {
            guard let opened = FileHandle(forReadingAtPath: file) else { throw CLIError("cannot read \(file)") }
            handle = opened
        }
        try manager.createDirectory(atPath: location.dataDirectory, withIntermediateDirectories: true)
        let staging = location.dataDirectory + "/.log-importing"
        do {
            let count = try importLines(from: handle, into: staging)
            try manager.moveItem(atPath: staging, toPath: location.logDirectory)
            print("imported \(count) events into \(location.logDirectory)")
        } catch {
            try? manager.removeItem(atPath: staging)
            if !existed { try? manager.removeItem(atPath: location.dataDirectory) }
            throw error
        }
    }

    /// Appends every line's event to a new log in `directory`; how many.
    private func importLines(from handle: FileHandle, into directory: String) throws -> UInt64 {
        var options = FileEventLog.Options()
        options.durability = .always
        // The log's own messages (opened, recovered) mean nothing for a log being created.
        let quiet = Logger(label: "bureau.import") { _ in SwiftLogNoOpLogHandler() }
        let log = try FileEventLog(directory: directory, options: options, logger: quiet)
        var batch: [LogRecord] = []
        var lineNumber = 0
        var next: UInt64 = 1
        let progress = Progress(label: "importing")
        func flush() throws {
            guard !batch.isEmpty else { return }
            try log.append(batch)
            try log.commit()
            batch.removeAll(keepingCapacity: true)
        }
        do {
            var reader = LineReader(handle)
            while let line = try reader.next() {
                lineNumber += 1
                if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) { continue }
                let record: LogRecord
                do {
                    record = try LogExchange.record(from: line, expecting: next)
                } catch {
                    throw CLIError("\(file) line \(lineNumber): \(error)")
                }
                batch.append(record)
                next += 1
                if batch.count >= 4096 { try flush() }
                progress.update(record.position)
            }
            try flush()
            try log.close()
        } catch {
            try? log.close()
            progress.finish()
            throw error
        }
        progress.finish()
        if next == 1 { throw CLIError("\(file) has no events") }
        return next - 1
    }
}
