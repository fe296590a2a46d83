import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import LogTools
import PostgresStore

struct LogVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every byte of the log: headers, records, checksums, positions, indexes.",
        discussion: HelpText.prose(
            """
            Reads every segment whole and lists every bad range it finds (not only the first):             its positions, segment and byte offsets, and what is wrong. Also checks that the             segments continue one another, that the recovery point (the last acknowledged             position) is in the log, and that each sparse index matches its segment (an index             is a hint: a mismatch is noted, not an error). Works beside a running bus.

            Exit status: 0 when the log is whole, 1 when anything is damaged.             `bureau log repair` moves damage aside. A segment of a later log format version (a later             Bureau wrote it) is named, with its version, and left alone: it is not damage, and             only a Bureau that reads that version can read or repair it.

            With --store, reads every event of the PostgreSQL store in position order and checks             that positions run from 1 without a hole and that each row's envelope reads back with             its row's position and id.
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var store: StoreOptions

    func run() async throws {
        if let url = try store.url() {
            try verify(url)
            return
        }
        let directory = global.location.logDirectory
        guard !FilePresence.isMissing(directory) else {
            throw CLIError("there is no log in \(directory)")
        }
        let progress = Progress(label: "verifying")
        let report = try LogVerifier.verify(directory: directory) { progress.update($0) }
        progress.finish()
        for note in report.notes { print("note: \(note)") }
        if !report.ok {
            // A later format is not damage: not for a repair by this build.
            for later in report.unsupported { print("bad: \(later)") }
            for problem in report.problems { print("bad: \(problem)") }
            for duplicate in report.duplicateIDs { print("bad: \(duplicate) (a log commits an id once)") }
            if !report.problems.isEmpty {
                print(
                    "\(report.problems.count) bad range(s) in \(report.segments) segment(s); "
                        + "`bureau log repair --data \(global.location.dataDirectory)` moves them aside")
            }
            if !report.duplicateIDs.isEmpty {
                print(
                    "\(report.duplicateIDs.count) id(s) committed more than once: the bus never writes that; "
                        + "the log was not written by it alone (an import, files copied by hand)")
            }
            throw ExitCode.failure
        }
        var line = "ok: \(report.records) records in \(report.segments) segment(s), \(report.bytes) bytes"
        if report.records > 0 { line += "; positions 1…\(report.head)" }
        if report.writeInProgress { line += " (the bus is writing the next record)" }
        print(line)
    }

    /// The store's events: contiguous positions, each envelope whole and matching its row.
    private func verify(_ url: PostgresStoreURL) throws {
        let reader = try PostgresLogReader(
            url: url, reconnectWait: StoreOptions.readerReconnectWait, logger: global.logger("bureau.store"))
        let head = try reader.head()
        let progress = Progress(label: "verifying")
        var problems: [String] = []
        var bytes = 0
        var ids = DuplicateIDFinder()
        do {
            try reader.scan(from: 1, through: head) { event, record in
                bytes += record.body.count
                ids.add(record.id, at: record.position)
                if event.position != record.position || event.id != record.id {
                    problems.append(
                        "position \(record.position): the envelope says position \(event.position), id \(event.id); "
                            + "the row says id \(record.id)")
                }
                progress.update(record.position)
                return problems.count < 1000
            }
        } catch {
            problems.append("\(error)")
        }
        progress.finish()
        problems += ids.duplicates().map { "\($0) (a log commits an id once)" }
        guard problems.isEmpty else {
            for problem in problems { print("bad: \(problem)") }
            print("\(problems.count) problem(s) in \(url)")
            throw ExitCode.failure
        }
        print("ok: \(head) events in \(url), \(bytes) bytes" + (head > 0 ? "; positions 1…\(head)" : ""))
    }
}
