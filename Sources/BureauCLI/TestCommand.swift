import ArgumentParser
import Bus
import BusScenarios
import Foundation
import Guards
import Logging
import Runtime
import Supervisor
import YAMLFile

struct TestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run scenario files (given / when / expect) against a real deployment.",
        discussion: HelpText.prose(
            """
            Each file runs against a fresh multi-process deployment on a temporary directory
            (the bus, the reducers, the booking server and adapter; no rates adapter, so that the rates
            are the ones the scenarios give), or, with --data, against a deployment that is already
            running, or, with --bus tcp://HOST:PORT (and --server-key, --client-key), against one
            whose bus is on another machine. Its scenarios run in order and share that deployment.

            Prints one line per scenario and a summary `N passed, N failed`; exits 1 when a scenario
            failed, 64 when a file is not a valid scenario file. The format is in
            Schemas/scenario.schema.json and README.md; Tests/Scenarios/ has examples.

            Examples:
              bureau test Tests/Scenarios/*.yaml
              bureau test Tests/Scenarios/watchlist.yaml --junit report.xml
              bureau test my.yaml --data .bureau     # against `bureau up`'s deployment
              bureau test my.yaml --bus tcp://198.51.100.1:7400 --server-key bus.pub --client-key me.key
            """)
    )

    /// What each file runs against unless --file names another deployment.
    static let deploymentFile = """
        processes:
          bus:
            command: bus
          booking-server:
            command: serve booking --port 0 --latency 1000
          reducers:
            command: run watchlist converter reservations alerts
            depends_on: [bus]
          booking-adapter:
            command: run booking-adapter --set booking-url=${booking-server.ready}
            depends_on: [bus, booking-server]
        restart:
          max_restarts: 0
        ready_timeout_s: 60
        stop_timeout_s: 10

        """

    @Argument(help: ArgumentHelp("Scenario files (YAML).", valueName: "file")) var files: [String]
    @OptionGroup var connection: BusConnectionOptions
    @Option(help: ArgumentHelp("Run against the deployment already running on this data directory.", valueName: "dir"))
    var data: String?
    @Option(
        name: .customLong("file"),
        help: ArgumentHelp(
            "The deployment to start for each file (default: the built-in test deployment).", valueName: "bureau.yaml"))
    var deploymentPath: String?
    @Option(help: ArgumentHelp("Write a JUnit XML report here.", valueName: "path")) var junit: String?
    @Option(
        help:
            "Seconds to wait for each scenario's expected events, 0.001 to 3600; a file's timeout_s wins. (default: 10)",
        transform: BoundedNumber.decimals(in: 0.001...3600))
    var timeout: Double = 10

    func validate() throws {
        guard data == nil || deploymentPath == nil else {
            throw ValidationError("--data runs against a deployment that is already up; --file starts one: pick one")
        }
        guard connection.bus == nil || deploymentPath == nil else {
            throw ValidationError("--bus runs against a deployment that is already up; --file starts one: pick one")
        }
    }

    func run() async throws {
        let router = Composition.registry().router
        var suites: [ScenarioSuite] = []
        do {
            for path in files { suites.append(try ScenarioFile.load(path, router: router)) }
        } catch {
            throw usageError(error.description)
        }
        let deployment = try loadDeployment()
        let remote = try connection.remote()
        // The deployment's own messages would mix with the report: they are not printed.
        let logger = Logger(label: "bureau.test", factory: { _ in SwiftLogNoOpLogHandler() })
        var options = BusFixture.Options()
        options.timeout = BoundedNumber.duration(seconds: timeout)
        var results: [ScenarioResult] = []
        for suite in suites {
            let running: TestDeployment
            do {
                if let remote {
                    running = try TestDeployment.existing(remote: remote, logger: logger)
                } else if let data {
                    running = try TestDeployment.existing(dataDirectory: data, logger: logger)
                } else {
                    FileHandle.standardError.write(Data("starting a deployment for \(suite.file)…\n".utf8))
                    running = try await TestDeployment.processes(
                        deployment, executable: UpCommand.executablePath(), logger: logger)
                }
            } catch {
                // Every scenario of the file fails with the reason; the other files still run.
                let reason = "cannot start the deployment: \(error)"
                for scenario in suite.scenarios {
                    let result = ScenarioResult(
                        file: suite.file, name: scenario.name, line: scenario.line, duration: .zero, failure: reason)
                    print(result.summary)
                    results.append(result)
                }
                continue
            }
            let runner = ScenarioRunner(fixture: running.fixture(router: router, options: options))
            results += await runner.run(suite) { result in print(result.summary) }
            await running.stop()
        }
        let failed = results.filter { !$0.passed }.count
        print("\(results.count - failed) passed, \(failed) failed")
        if let junit {
            do {
                try JUnitReport.xml(results).write(toFile: junit, atomically: true, encoding: .utf8)
            } catch {
                throw CLIError("cannot write the JUnit report to \(junit): \(error.localizedDescription)")
            }
        }
        if failed > 0 { throw ExitCode.failure }
    }

    private func loadDeployment() throws -> Deployment {
        do {
            guard let deploymentPath else {
                return try DeploymentFile.parse(Self.deploymentFile, file: "(test deployment)")
            }
            return try DeploymentFile.parse(try YAMLReader.text(ofFile: deploymentPath), file: deploymentPath)
        } catch {
            throw usageError(error.description)
        }
    }
}
