import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import LogTools

struct LogPull: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "Copy the log of a bus on another machine into a new data directory, verified record by record.",
        discussion: HelpText.prose(
            """
            Reads the remote log through the bus (--bus, --server-key and --client-key, or \
            BUREAU_BUS, BUREAU_SERVER_KEY and BUREAU_CLIENT_KEY) from position 1 up to --to, or up \
            to the head when it starts, and writes it as a new log into --data, which must be new \
            or empty. Each record is checked as it comes: positions follow on from 1 and each \
            envelope decodes at the position it came at. Once the copy is closed, every record is \
            read back from its files and compared with what the bus sent. On any failure nothing \
            is left in --data. The copy then serves `log show`, `replay --verify` and \
            `tui --replay` offline.

            Example:
              bureau log pull --bus tcp://198.51.100.1:7400 --server-key bus.pub --client-key laptop.key --data ./copy
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var connection: BusConnectionOptions
    @Option(help: "The last position to copy (default: the head when the pull starts).") var to: UInt64?

    func validate() throws {
        if let to, to < 1 { throw ValidationError("--to starts at 1") }
    }

    func run() async throws {
        guard let remote = try connection.remote() else {
            throw CLIError(
                "log pull copies the log of a bus on another machine: give --bus tcp://HOST:PORT (or BUREAU_BUS)")
        }
        let location = global.location
        let client = try connection.client(process: "log-pull", global: global, upcasting: .none)
        defer { client.close() }
        // What each record's bytes sum to, to compare the copy with once it is on disk.
        var checksums: [UInt32] = []
        let progress = Progress(label: "pulling")
        let count = try await NewLog.build(in: location) { log in
            var batch: [LogRecord] = []
            func flush() throws {
                guard !batch.isEmpty else { return }
                try log.append(batch)
                try log.commit()
                batch.removeAll(keepingCapacity: true)
            }
            // readLog hands over events in order from 1, each decoded from its envelope.
            try await client.readLog(to: to) { event, envelope in
                batch.append(LogRecord(position: event.position, id: event.id, body: envelope))
                checksums.append(Checksum.crc32(of: envelope))
                if batch.count >= 4096 { try flush() }
                progress.update(event.position)
                return true
            }
            try flush()
            progress.finish()
            return UInt64(checksums.count)
        }
        var compared = 0
        try LogFiles.scan(in: location) { _, record in
            guard compared < checksums.count, record.position == UInt64(compared + 1),
                Checksum.crc32(of: record.body) == checksums[compared]
            else {
                throw CLIError(
                    "the copy in \(location.logDirectory) differs from what the bus sent at position \(record.position)"
                )
            }
            compared += 1
            return true
        }
        guard compared == checksums.count else {
            throw CLIError(
                "the copy in \(location.logDirectory) holds \(compared) of the \(checksums.count) events pulled")
        }
        print("pulled \(count) events from \(remote.url) into \(location.logDirectory); each read back and compared")
    }
}
