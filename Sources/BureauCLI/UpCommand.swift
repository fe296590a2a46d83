import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import Logging
import ServiceLifecycle
import Supervisor
import YAMLFile

struct UpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Run the whole deployment: every process, in dependency order, supervised.",
        discussion: HelpText.prose(
            """
            Without --file, runs the built-in default deployment (`bureau init` writes it out as
            bureau.yaml to edit): the bus, the rates and booking servers, the reducers, the rates
            and booking adapters, and the front-end in this terminal.

            Processes start in dependency order; each must report ready (the bus bound and
            answering, servers listening, reducers caught up) within its ready_timeout_s. A process
            that fails is restarted with exponential backoff, up to max_restarts, then reported as
            crash-looping. Ctrl-C, SIGTERM, `bureau down` or quitting the front-end stops everything
            in reverse order (SIGTERM, stop_timeout_s, then SIGKILL). If the supervisor itself is
            killed, its processes stop too.

            Each process's output goes to DATA/logs/NAME.log (rotated at log_max_bytes); with
            --no-tui it is also printed here with a name prefix. `bureau ps`, `bureau logs` and
            `bureau down` work against the running deployment.

            Examples:
              bureau up                    # the default deployment with the front-end
              bureau up --no-tui           # no front-end: stream every process's output
              bureau up --file bureau.yaml --data /tmp/demo
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var readiness: ReadinessOptions
    @Option(
        name: .shortAndLong, help: ArgumentHelp("The deployment file (default: the built-in one).", valueName: "path"))
    var file: String?
    @Flag(help: "Do not open the front-end; print every process's output with a name prefix.")
    var noTui = false

    func run() async throws {
        global.bootstrapLogging()
        let logger = global.logger("bureau.up")
        let deployment: Deployment
        do {
            if let file {
                deployment = try DeploymentFile.parse(try YAMLReader.text(ofFile: file), file: file)
            } else {
                deployment = try DeploymentFile.defaultDeployment()
            }
        } catch {
            throw usageError(error.description)
        }
        let location = global.location
        do {
            // Owner-only: the data directory (when it is made here) and the run directory.
            try OwnerOnly.makeDirectory(location.runDirectory)
        } catch {
            throw usageError("cannot create the data directory \(location.dataDirectory): \(error)")
        }
        var configuration = Supervisor.Configuration(
            deployment: deployment, location: location, executable: Self.executablePath(), console: noTui)
        if !noTui {
            configuration.frontEnd = ["tui"]
        }
        let readiness = self.readiness
        configuration.onReady = { _ in readiness.notify() }
        let supervisor: Supervisor
        do {
            supervisor = try Supervisor(configuration: configuration, logger: logger)
        } catch {
            throw usageError(error.description, code: 1)
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: supervisor, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as SupervisorError {
            throw usageError(error.description, code: 1)
        }
    }

    /// This executable, so that children run the same build.
    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments.first ?? "bureau" }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write the default deployment out as bureau.yaml, to edit and run with `bureau up --file`."
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write it.", valueName: "path")) var file = "bureau.yaml"
    @Flag(help: "Overwrite an existing file.") var force = false

    func run() throws {
        guard force || !FileManager.default.fileExists(atPath: file) else {
            throw usageError("\(file) already exists; --force overwrites it")
        }
        do {
            try Deployment.defaultFile.write(toFile: file, atomically: true, encoding: .utf8)
        } catch {
            throw usageError("cannot write \(file): \(error.localizedDescription)", code: 1)
        }
        print("wrote \(file); run it with: bureau up --file \(file)")
    }
}

struct PsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ps", abstract: "List the processes of a running deployment (`bureau up`).")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print them as JSON.") var json = false

    func run() throws {
        let rows: [Supervisor.Row]
        do {
            rows = try ControlClient.processes(location: global.location)
        } catch {
            throw usageError(error.description, code: 1)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(rows), as: UTF8.self))
            return
        }
        let width = max(7, rows.map(\.name.count).max() ?? 0)
        print(
            "PROCESS".padding(toLength: width, withPad: " ", startingAt: 0)
                + "  PID      STATE          RESTARTS  UPTIME")
        for row in rows {
            let uptime = row.uptimeSeconds.map { Self.format(seconds: $0) } ?? "-"
            print(
                row.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                    + "\(row.pid)".padding(toLength: 7, withPad: " ", startingAt: 0) + "  "
                    + row.state.rawValue.padding(toLength: 13, withPad: " ", startingAt: 0) + "  "
                    + "\(row.restarts)".padding(toLength: 8, withPad: " ", startingAt: 0) + "  " + uptime)
        }
    }

    static func format(seconds: Double) -> String {
        let total = Int(seconds)
        if total < 60 { return "\(total)s" }
        if total < 3600 { return "\(total / 60)m\(total % 60)s" }
        return "\(total / 3600)h\(total / 60 % 60)m"
    }
}

struct DownCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "down", abstract: "Stop a running deployment (`bureau up`), every process in reverse order.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        do {
            _ = try ControlClient.ask("down", location: global.location)
        } catch {
            throw usageError(error.description, code: 1)
        }
        print("stopping the deployment on \(global.location.dataDirectory)")
    }
}

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
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    static func emit(_ line: Substring, _ name: String, prefix: Bool, width: Int) {
        print(prefix ? name.padding(toLength: width, withPad: " ", startingAt: 0) + " | " + line : String(line))
    }
}
