import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import LogTools

struct LogVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every byte of the log: headers, records, checksums, positions, indexes.",
        discussion: HelpText.prose(
            """
            Reads every segment whole and lists every bad range it finds (not only the first):             its positions, segment and byte offsets, and what is wrong. Also checks that the             segments continue one another, that the recovery point (the last acknowledged             position) is in the log, and that each sparse index matches its segment (an index             is a hint: a mismatch is noted, not an error). Works beside a running bus.

            Exit status: 0 when the log is whole, 1 when anything is damaged.             `bureau log repair` moves damage aside.
            """)
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let directory = global.location.logDirectory
        guard FileManager.default.fileExists(atPath: directory) else {
            throw CLIError("there is no log in \(directory)")
        }
        let progress = Progress(label: "verifying")
        let report = try LogVerifier.verify(directory: directory) { progress.update($0) }
        progress.finish()
        for note in report.notes { print("note: \(note)") }
        if !report.ok {
            for problem in report.problems { print("bad: \(problem)") }
            print(
                "\(report.problems.count) bad range(s) in \(report.segments) segment(s); "
                    + "`bureau log repair --data \(global.location.dataDirectory)` moves them aside")
            throw ExitCode.failure
        }
        var line = "ok: \(report.records) records in \(report.segments) segment(s), \(report.bytes) bytes"
        if report.records > 0 { line += "; positions 1…\(report.head)" }
        if report.writeInProgress { line += " (the bus is writing the next record)" }
        print(line)
    }
}
