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
        // The logs that could not be read, said once each while they stay so: a tool that could
        // not print everything asked for exits non-zero at the end.
        var unreadable: Set<String> = []
        var anyUnreadable = false
        func cannotRead(_ row: Supervisor.Row, _ error: any Error) {
            anyUnreadable = true
            guard unreadable.insert(row.log).inserted else { return }
            _ = usageError("cannot read the output of \(row.name), \(row.log): \(error)", code: 1)
        }
        for row in chosen {
            let data: Data
            do {
                let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: row.log))
                defer { try? handle.close() }
                data = try handle.readToEnd() ?? Data()
            } catch {
                cannotRead(row, error)
                continue
            }
            offsets[row.log] = UInt64(data.count)
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                .dropLast().suffix(tail)
            for line in lines { Self.emit(line, row.name, prefix: prefix, width: width) }
        }
        guard follow else {
            if anyUnreadable { throw ExitCode(1) }
            return
        }
        fflush(nil)
        while !Task.isCancelled {
            for row in chosen {
                let data: Data
                var start = offsets[row.log] ?? 0
                do {
                    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: row.log))
                    defer { try? handle.close() }
                    let end = try handle.seekToEnd()
                    if end < start { start = 0 }  // rotated
                    try handle.seek(toOffset: start)
                    data = end > start ? try handle.read(upToCount: Int(end - start)) ?? Data() : Data()
                } catch {
                    // Missing for a moment while the supervisor rotates it: read at the next turn.
                    if FilePresence.isMissing(row.log) { continue }
                    cannotRead(row, error)
                    continue
                }
                // Read again: a later failure is said again.
                unreadable.remove(row.log)
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
        if anyUnreadable { throw ExitCode(1) }
    }

    static func emit(_ line: Substring, _ name: String, prefix: Bool, width: Int) {
        print(prefix ? name.padding(toLength: width, withPad: " ", startingAt: 0) + " | " + line : String(line))
    }
}
