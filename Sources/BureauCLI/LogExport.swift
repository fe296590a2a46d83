import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import LogTools
import Logging
import Runtime

struct LogExport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write events as JSON lines, losslessly: a log excerpt for a bug report.",
        discussion: HelpText.prose(
            """
            One JSON object per line: position, id, type, time, producer, causation, correlation, \
            the payload in protobuf's JSON mapping (an unknown type has "unknown": true, a payload \
            that does not decode "undecodable": why, and both "payloadBase64"), and "envelope": the stored record's bytes in base64, so that \
            `bureau log import` reproduces the log byte for byte. Reads the files directly.

            Replay needs every event from position 1: export with the default --from to give \
            someone an excerpt they can import and replay.

            Examples:
              bureau log export --to 1200 > excerpt.jsonl
              bureau log export --from 1100 --to 1200 --data /srv/bureau > around-the-bug.jsonl
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var connection: BusConnectionOptions
    @OptionGroup var store: StoreOptions
    @Option(help: "The first position to export.") var from: UInt64 = 1
    @Option(help: "The last position to export (default: the end of the log).") var to: UInt64?

    func validate() throws {
        guard from >= 1 else { throw ValidationError("--from starts at 1") }
        if let to, to < from { throw ValidationError("--to (\(to)) is before --from (\(from))") }
    }

    func run() async throws {
        let progress = Progress(label: "exporting")
        var out = Data()
        let source = try LogSource.resolve(global, connection, store, process: "log-export")
        defer { source.close() }
        try await source.scan(from: from, to: to) { event, envelope in
            out.append(contentsOf: LogExchange.line(event, envelope: envelope).utf8)
            out.append(UInt8(ascii: "\n"))
            if out.count >= 1 << 20 {
                FileHandle.standardOutput.write(out)
                out.removeAll(keepingCapacity: true)
            }
            progress.update(event.position)
            return true
        }
        FileHandle.standardOutput.write(out)
        progress.finish()
    }
}
