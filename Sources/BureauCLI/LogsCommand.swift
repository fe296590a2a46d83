import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import Logging
import ServiceLifecycle
import Supervisor
import YAMLFile

struct LogsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Print the output of a running deployment's processes; -f follows it.",
        discussion: HelpText.prose(
            """
            Without PROCESS, every process's output, each line prefixed with its name. The
            files live in DATA/logs/NAME.log (older ones NAME.log.1 … .3).
            """)
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "A process name, as `bureau ps` lists it.") var process: String?
    @Flag(name: .shortAndLong, help: "Keep printing new output until interrupted.") var follow = false
    @Option(
        help: "Lines of existing output to print first (per process), 0 to 1000000. (default: 100)",
        transform: BoundedNumber.integers(in: 0...1_000_000))
    var tail = 100

    func run() async throws {
        let rows: [Supervisor.Row]
        do {
            rows = try ControlClient.processes(location: global.location)
        } catch {
            throw usageError(error.description, code: 1)
        }
        let chosen = process.map { name in rows.filter { $0.name == name } } ?? rows
        if let process, chosen.isEmpty {
            throw usageError("no process '\(process)'; there are: \(rows.map(\.name).joined(separator: ", "))")
        }
        let prefix = chosen.count > 1
        let width = chosen.map(\.name.count).max() ?? 0
        var offsets: [String: UInt64] = [:]
        for row in chosen {
            guard let handle = FileHandle(forReadingAtPath: row.log) else { continue }
            let data = handle.readDataToEndOfFile()
            offsets[row.log] = UInt64(data.count)
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                .dropLast().suffix(tail)
            for line in lines { Self.emit(line, row.name, prefix: prefix, width: width) }
            try? handle.close()
        }
        guard follow else { return }
        fflush(nil)
        while !Task.isCancelled {
            for row in chosen {
                guard let handle = FileHandle(forReadingAtPath: row.log) else { continue }
                defer { try? handle.close() }
                let end = handle.seekToEndOfFile()
                var start = offsets[row.log] ?? 0
                if end < start { start = 0 }  // rotated
                guard end > start else { continue }
                handle.seek(toFileOffset: start)
                let data = handle.readData(ofLength: Int(end - start))
                guard let lastNewline = data.lastIndex(of: UInt8(ascii: "\n")) else { continue }
                let complete = data[data.startIndex...lastNewline]
                offsets[row.log] = start + UInt64(complete.count)
                for line in String(decoding: complete, as: UTF8.self).split(separator: "\n") {
                    Self.emit(line, row.name, prefix: prefix, width: width)
                }
            }
            // Followed output is read as it comes (`| grep`), not when a pipe's buffer fills.
            fflush(nil)
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    static func emit(_ line: Substring, _ name: String, prefix: Bool, width: Int) {
        print(prefix ? name.padding(toLength: width, withPad: " ", startingAt: 0) + " | " + line : String(line))
    }
}
