import AlertsFeature
import BookingAdapter
import BookingServer
import Bus
import BusTesting
import ConverterFeature
import Foundation
import ReservationsFeature
import Runtime
import SystemFeature
import TestSupport
import Testing
import WatchlistFeature

/// The project's scenario files, in two tiers: on the in-memory twin (the modules hosted beside an
/// `InMemoryBus` in this process), and live, by `bureau test` against a real multi-process
/// deployment.
@Suite(.timeLimit(.minutes(5)))
struct ScenarioCommandTests {
    /// Tests/Scenarios, found from this file.
    static let scenarios = "/" + #filePath.split(separator: "/").dropLast(2).joined(separator: "/") + "/Scenarios"

    static var files: [String] {
        ["watchlist", "converter", "reservations", "alerts"].map { "\(scenarios)/\($0).yaml" }
    }

    @Test func everyProjectScenarioPassesAndTheJUnitReportSaysSo() async throws {
        let directory = try TemporaryDirectory("scenarios")
        let runner = BusProcess(directory: directory.path)
        let report = directory.file("report.xml")
        let result = try await runner.run(["test"] + Self.files + ["--junit", report], data: false)
        let count = try Self.files.map { try ScenarioFile.load($0).scenarios.count }.reduce(0, +)
        #expect(count >= 40, "every command of every module, rejections included")
        #expect(result.code == 0, "\(result.out)\n\(result.err)")
        let lines = result.out.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("✓ ") }.count == count, "\(result.out)")
        #expect(lines.last == "\(count) passed, 0 failed")
        let xml = try String(contentsOfFile: report, encoding: .utf8)
        #expect(xml.contains(#"<testsuites name="bureau test" tests="\#(count)" failures="0""#))
        #expect(xml.components(separatedBy: "<testcase ").count - 1 == count)
    }

    /// The same files on the in-memory tier: the default deployment's modules and the booking
    /// adapter, which calls a booking server in this process with `bureau test`'s one-second latency.
    @Test func everyProjectScenarioPassesOnTheInMemoryTwin() async throws {
        let server = try await InProcessServer { onListening in
            var configuration = BookingServer.Configuration()
            configuration.port = 0
            configuration.latency = .seconds(1)
            return BookingServer(configuration: configuration).application(
                logger: TestLogging.logger("booking"), onListening: onListening)
        }
        let registry = ModuleRegistry([
            WatchlistModule.make(), ConverterModule.make(), ReservationsModule.make(), AlertsModule.make(),
            SystemModule.make(), BookingAdapterModule.make(),
        ])
        var options = BusFixture.Options()
        options.timeout = .seconds(20)
        var results: [ScenarioResult] = []
        for file in Self.files {
            let suite = try ScenarioFile.load(file, router: registry.router)
            let deployment = try await TestDeployment.inMemory(
                modules: registry.modules, settings: ["booking-url": "http://127.0.0.1:\(server.port)"],
                logger: TestLogging.logger("deployment"))
            let runner = ScenarioRunner(fixture: deployment.fixture(router: registry.router, options: options))
            results += try await deployment.run { _ in await runner.run(suite) }
        }
        await server.stop()
        let count = try Self.files.map { try ScenarioFile.load($0).scenarios.count }.reduce(0, +)
        #expect(results.count == count)
        #expect(results.filter { !$0.passed }.map(\.summary) == [])
    }

    @Test func aFailingScenarioIsReportedAndTheExitCodeSaysSo() async throws {
        let directory = try TemporaryDirectory("scenarios")
        let file = directory.file("wrong.yaml")
        try """
        scenarios:
          - name: expects the wrong answer
            when: { command: "bureau://converter/amount?value=10&currency=EUR" }
            expect:
              - type: bureau.converter.AmountRejected
          - name: expects the right one
            when: { command: "bureau://converter/amount?value=12&currency=EUR" }
            expect:
              - type: bureau.converter.AmountChanged
                fields: { value: "12.00" }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await BusProcess(directory: directory.path).run(["test", file], data: false)
        #expect(result.code == 1)
        #expect(result.out.contains("✗ \(file): expects the wrong answer"), "\(result.out)")
        #expect(result.out.contains("missing    bureau.converter.AmountRejected {}"), "\(result.out)")
        #expect(result.out.contains(#"unexpected bureau.converter.AmountChanged at position"#), "\(result.out)")
        #expect(result.out.contains("✓ \(file): expects the right one"))
        #expect(result.out.hasSuffix("1 passed, 1 failed\n"))
    }

    @Test func anInvalidFileIsRefusedNamingTheLineBeforeAnythingStarts() async throws {
        let directory = try TemporaryDirectory("scenarios")
        let file = directory.file("typo.yaml")
        try "scenarios:\n  - name: a\n    when: { command: bureau://watchlist/add }\n    expct: []\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await BusProcess(directory: directory.path).run(["test", file], data: false)
        #expect(result.code == 64)
        #expect(result.err.contains("\(file):4: scenarios[0].expct: unknown field"), "\(result.err)")
        #expect(!result.err.contains("starting a deployment"))
    }

    @Test func aDeploymentThatCannotStartFailsItsFilesScenariosWithTheReason() async throws {
        let directory = try TemporaryDirectory("scenarios")
        let deployment = directory.file("broken.yaml")
        try "processes:\n  bus:\n    command: bus --durability sometimes\nrestart:\n  max_restarts: 0\n"
            .write(toFile: deployment, atomically: true, encoding: .utf8)
        let result = try await BusProcess(directory: directory.path).run(
            ["test", "\(Self.scenarios)/converter.yaml", "--file", deployment, "--junit", directory.file("r.xml")],
            data: false)
        let count = try ScenarioFile.load("\(Self.scenarios)/converter.yaml").scenarios.count
        #expect(result.code == 1, "\(result.out)\n\(result.err)")
        #expect(
            result.out.contains("cannot start the deployment: bus kept failing before it was ready"), "\(result.out)")
        #expect(result.out.contains("unknown durability policy 'sometimes'"), "what the process said is in the report")
        #expect(result.out.hasSuffix("0 passed, \(count) failed\n"), "\(result.out)")
        let xml = try String(contentsOfFile: directory.file("r.xml"), encoding: .utf8)
        #expect(xml.contains(#"failures="\#(count)""#))
    }

    @Test func scenariosRunAgainstADeploymentThatIsAlreadyUp() async throws {
        let directory = try TemporaryDirectory("scenarios")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let reducers = try ChildProcess(
            BureauExecutable.path, ["run", "converter", "--data", bus.location.dataDirectory],
            directory: directory.path, name: "run", readiness: true)
        _ = try await reducers.waitUntilReady()
        let result = try await bus.run(["test", "\(Self.scenarios)/converter.yaml"])
        #expect(result.code == 0, "\(result.out)\n\(result.err)")
        #expect(!result.err.contains("starting a deployment"), "it used the running one")
        // Everything it did is in the running deployment's log.
        #expect(
            try bus.records().count >= 2 * (try ScenarioFile.load("\(Self.scenarios)/converter.yaml").scenarios.count))
        reducers.signal(SIGTERM)
        #expect(await reducers.exitCode() == 0)
        #expect(await bus.stop() == 0)
    }
}
