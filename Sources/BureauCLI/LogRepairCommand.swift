import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import LogTools

struct LogRepairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Move damaged parts of the log aside, so that the bus can start again.",
        discussion: HelpText.prose(
            """
            When the bus refuses to start because the log is damaged (a bad record it had             acknowledged, a bad segment header, a missing segment), this makes the log whole             again without deleting anything: each damaged segment is rewritten with its valid             records as they were, and each position the damage held (or acknowledged past the end of the data) becomes a             bureau.system.RecordLost event (so positions stay contiguous and none is reused);             the original segment goes to log/damaged-<time>/ with a README saying what was             wrong. A torn write at the end that was never acknowledged is cut. Indexes that do             not match their segments are rebuilt.

            Stop the bus first: repair takes the log's lock. --dry-run says what it would do.
            Replay's verification reports the lost positions, since reducers' outputs there             are gone: see what they were in the damaged segment, if anything of it is readable.
            """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Say what would change, and change nothing.") var dryRun = false

    func run() async throws {
        let directory = global.location.logDirectory
        guard !FilePresence.isMissing(directory) else {
            throw CLIError("there is no log in \(directory)")
        }
        let report = try LogRepair.repair(directory: directory, dryRun: dryRun, placeholder: LogRepair.recordLost)
        for problem in report.before.problems { print("found: \(problem)") }
        print(report)
    }
}
