import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import Logging
import ServiceLifecycle
import Supervisor
import TerminalUI
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
            answering, servers listening, reducers caught up) within its ready_timeout_s. Once all
            are, the file's setup: command URLs are sent in order, as `bureau send` sends them (the
            default deployment's set the commission on each currency sold). A process
            that fails is restarted with exponential backoff, up to max_restarts, then reported as
            crash-looping. Ctrl-C, SIGTERM, `bureau down` or quitting the front-end stops everything
            in reverse order (SIGTERM, stop_timeout_s, then SIGKILL). If the supervisor itself is
            killed, its processes stop too.

            Each process's output goes to DATA/logs/NAME.log (rotated at log_max_bytes); with
            --no-tui it is also printed here with a name prefix. Without a terminal on standard
            input and output (a pipe, a service, CI) `up` says so and runs as with --no-tui. `bureau ps`, `bureau logs` and
            `bureau down` work against the running deployment.

            Every process serves its metrics at /metrics on loopback (DATA/run/metrics/NAME.json says
            where); `up` keeps DATA/prometheus-targets.json listing them for Prometheus'
            file_sd_configs. `bureau status` and `bureau top` show every process and consumer.

            Examples:
              bureau up                    # the default deployment with the front-end
              bureau up --no-tui           # no front-end: stream every process's output
              bureau up --file bureau.yaml --data /tmp/demo
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var readiness: ReadinessOptions
    @OptionGroup var metrics: MetricsOptions
    @OptionGroup var traces: TraceOptions
    @Option(
        name: .shortAndLong, help: ArgumentHelp("The deployment file (default: the built-in one).", valueName: "path"))
    var file: String?
    @Flag(help: "Do not open the front-end; print every process's output with a name prefix.")
    var noTui = false

    func run() async throws {
        traces.passOn()
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
        let setup = try Self.setupRoutes(deployment)
        let location = global.location
        do {
            // Owner-only: the data directory (when it is made here) and the run directory.
            try OwnerOnly.makeDirectory(location.runDirectory)
        } catch {
            throw usageError("cannot create the data directory \(location.dataDirectory): \(error)")
        }
        // The front-end needs a terminal on standard input and output; without one (a pipe, a
        // service manager, CI) the deployment runs as with --no-tui rather than stopping as soon
        // as it is up because its front-end could not open.
        let frontEnd = !noTui && Terminal.isInteractive
        if !noTui && !frontEnd {
            FileHandle.standardError.write(Data((Self.noTerminalNotice + "\n").utf8))
        }
        var configuration = Supervisor.Configuration(
            deployment: deployment, location: location, executable: Self.executablePath(), console: !frontEnd)
        if frontEnd {
            configuration.frontEnd = ["tui"]
        }
        let readiness = self.readiness
        configuration.onReady = { _ in
            readiness.notify()
            Task { await Self.sendSetup(setup, deployment: deployment, location: location, logger: logger) }
        }
        let supervisor: Supervisor
        do {
            supervisor = try Supervisor(configuration: configuration, logger: logger)
        } catch {
            throw usageError(error.description, code: 1)
        }
        // The supervisor's own /metrics (each process up, its restarts), and the targets file
        // that points Prometheus at every process's.
        let processMetrics = SupervisorMetrics()
        let endpoint = metrics.endpoint(process: "supervisor", location: location, logger: logger) {
            processMetrics.record(supervisor.rows)
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: supervisor, successTerminationBehavior: .gracefullyShutdownGroup)]
                    + [endpoint?.inGroup].compactMap { $0 }
                    + [
                        .init(
                            service: PrometheusTargets(location: location, logger: logger),
                            successTerminationBehavior: .ignore)
                    ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as SupervisorError {
            throw usageError(error.description, code: 1)
        }
    }

    /// What `up` says when it runs without the front-end because there is no terminal.
    static let noTerminalNotice =
        "bureau up: standard input or output is not a terminal, so the front-end cannot open; running as "
        + "--no-tui (every process's output is printed here; give --no-tui to say so, or run `bureau tui` "
        + "in a terminal)"

    /// This executable, so that children run the same build.
    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments.first ?? "bureau" }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
