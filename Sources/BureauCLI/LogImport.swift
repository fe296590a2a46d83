import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import LogTools
import Logging
import PostgresStore
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

            With --store, imports into an empty PostgreSQL store instead (holding its writer \
            lock, so no daemon writes meanwhile): every line is checked first, then stored.

            Examples:
              bureau log import excerpt.jsonl --data ./repro
              bureau replay --verify --data ./repro
            """)
    )

    @Argument(help: "The JSON lines file, or - for standard input (not with --store).") var file: String
    @OptionGroup var global: GlobalOptions
    @OptionGroup var store: StoreOptions

    func run() async throws {
        if let url = try store.url() {
            try importIntoStore(url)
            return
        }
        let location = global.location
        let handle: FileHandle
        if file == "-" {
            handle = .standardInput
        } else {
            guard let opened = FileHandle(forReadingAtPath: file) else { throw CLIError("cannot read \(file)") }
            handle = opened
        }
        let count = try await NewLog.build(in: location) { log in try importLines(from: handle, into: log) }
        print("imported \(count) events into \(location.logDirectory)")
    }

    /// Checks every line, then stores them: a store cannot be built aside and moved into place.
    private func importIntoStore(_ url: PostgresStoreURL) throws {
        guard file != "-" else { throw CLIError("--store imports from a file, read twice: not from standard input") }
        let log = try PostgresEventLog(url: url, logger: global.logger("bureau.store"))
        defer { try? log.close() }
        guard log.head == 0 else {
            throw CLIError("the store \(url) already holds \(log.head) events; import into an empty database")
        }
        for target in [nil, log] as [(any EventLog)?] {
            guard let handle = FileHandle(forReadingAtPath: file) else { throw CLIError("cannot read \(file)") }
            defer { try? handle.close() }
            let count = try importLines(from: handle, into: target)
            if target != nil { print("imported \(count) events into \(url)") }
        }
    }

    /// Appends every line's event to `log` (only checks them when it is nil); how many.
    private func importLines(from handle: FileHandle, into log: (any EventLog)?) throws -> UInt64 {
        var batch: [LogRecord] = []
        var lineNumber = 0
        var next: UInt64 = 1
        // Checked before the log is moved into place (or, for a store, before the pass that stores).
        var ids = DuplicateIDFinder()
        let progress = Progress(label: "importing")
        defer { progress.finish() }
        func flush() throws {
            guard !batch.isEmpty else { return }
            try log?.append(batch)
            try log?.commit()
            batch.removeAll(keepingCapacity: true)
        }
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
            ids.add(record.id, at: UInt64(lineNumber))
            batch.append(record)
            next += 1
            if batch.count >= 4096 { try flush() }
            progress.update(record.position)
        }
        try flush()
        if next == 1 { throw CLIError("\(file) has no events") }
        if let repeated = ids.duplicates().first {
            let lines = repeated.occurrences.map(String.init)
            throw CLIError(
                "\(file) line \(lines[1]): event id \(repeated.id) repeats the id of line \(lines[0])"
                    + (lines.count > 2 ? " (and lines \(lines.dropFirst(2).joined(separator: ", ")))" : "")
                    + "; a log commits an id once: nothing was imported")
        }
        return next - 1
    }
}
