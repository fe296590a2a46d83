import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import LogTools

struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Inspect the event log.",
        discussion: HelpText.prose(
            """
            show, stats, verify and export read the segment files directly: they work with or
            without a running bus, and see only records whose checksum holds. A damaged record
            stops them with an error naming its segment, byte offset and position (exit 1).
            Given --bus tcp://HOST:PORT (with --server-key and --client-key), show, stats and
            export read a bus on another machine through its catch-up reads instead, and print
            the same; pull copies that log into a new local data directory. tail follows the
            live bus. import builds a new log from an export. repair moves damage aside so that
            the bus can start again.
            """),
        subcommands: [
            LogShow.self, LogTail.self, LogStats.self, LogVerify.self, LogRepairCommand.self, LogExport.self,
            LogImport.self, LogPull.self,
        ]
    )
}
