import BureauSchemas
import Bus
import Foundation
import TestSupport
import Testing
import ZeroMQBus

@testable import BureauCLI

/// What `bureau status` and `top` read from the log's system events. Off the cooperative pool:
/// parsing a process's command line with swift-argument-parser is slow in a debug build.
@Suite(.ownThreads)
struct HealthProbeTests {
    static func event(_ position: UInt64, _ type: String, payload: Data) -> StoredEvent {
        StoredEvent(
            position: position, id: .derived(module: "test", position: position, index: 0), type: type,
            commitTime: CommitTime(seconds: 1_700_000_000, nanos: 0), producerProcess: "reducers", payload: payload)
    }

    /// What a process consumes is read from the command line its `ProcessStarted` gives: the
    /// modules of `run` whose hosts report progress (not the rates adapter, which follows no
    /// subscription), the front-end's own; nothing for a server or the bus, whatever their
    /// options; unknown (nil) for a `run` or a command this build cannot read.
    @Test(
        arguments: [
            (["run", "watchlist", "converter", "--snapshot-every", "100"], ["watchlist", "converter"]),
            (
                ["run", "rates-adapter", "booking-adapter", "--set", "booking-url=http://127.0.0.1:1"],
                ["booking-adapter"]
            ),
            (["tui"], ["tui"]),
            (["serve", "rates", "--port", "0"], []),
            (["bus", "--heartbeat-ms", "100"], []),
            (["run", "no-such-module"], nil),
            (["frobnicate"], nil),
            // A standby's store is in its own environment, not in that of `bureau status`.
            (["bus", "--standby"], []),
        ] as [([String], [String]?)])
    func theConsumersAProcessRunsComeFromItsCommandLine(arguments: [String], expected: [String]?) {
        #expect(HealthProbe.consumers(runBy: arguments) == expected)
    }

    @Test func aProcessStartedEventTellsWhatItConsumes() throws {
        var system = HealthProbe.SystemEvents()
        var started = Bureau_System_ProcessStarted()
        started.process = "reducers"
        started.pid = 11
        started.arguments = ["run", "watchlist", "alerts"]
        system.apply(
            Self.event(4, Bureau_System_ProcessStarted.protoMessageName, payload: try started.serializedData()))
        #expect(system.processes["reducers"]?.expectedConsumers == ["watchlist", "alerts"])
        #expect(system.position == 4)
        #expect(!system.complete, "complete only once read up to the head")
    }

    @Test func anUnreadableSystemEventIsItsProducersLastErrorNotPassedOver() throws {
        var system = HealthProbe.SystemEvents()
        var raised = Bureau_System_ErrorRaised()
        raised.code = "fetch-failed"
        raised.message = "ECB: timed out"
        system.apply(Self.event(1, Bureau_System_ErrorRaised.protoMessageName, payload: try raised.serializedData()))
        #expect(system.lastErrors["reducers"] == "fetch-failed: ECB: timed out")

        // A truncated varint: not an ErrorRaised, and not another type either.
        system.apply(Self.event(2, Bureau_System_ErrorRaised.protoMessageName, payload: Data([0x0A, 0xFF])))
        let said = try #require(system.lastErrors["reducers"])
        #expect(said.hasPrefix("unreadable bureau.system.ErrorRaised at position 2: "), "\(said)")
        #expect(system.processes.isEmpty)
    }
}

extension HealthProbeTests {
    /// Without a supervisor the log tells the processes; a supervisor whose socket is there but
    /// does not answer is trouble, said, since `bureau ps` and `down` cannot reach it either.
    @Test func aSupervisorThatDoesNotAnswerIsTroubleAndNoSupervisorIsNot() async throws {
        let directory = try TemporaryDirectory("probe")
        let location = BusLocation(dataDirectory: directory.file("data"))
        try FileManager.default.createDirectory(atPath: location.runDirectory, withIntermediateDirectories: true)
        let client = try ZeroMQBusClient(location: location, options: .init(process: "test"))
        defer { client.close() }
        let probe = HealthProbe(
            client: client, location: location, local: true, supervisorTimeout: .milliseconds(200))
        // Given no supervisor: nothing is said of one
        let none = await probe.health(maxLagSeconds: 30, timeout: .milliseconds(200))
        #expect(none.processesProblem?.contains("supervisor") != true, "\(none.problems)")
        // Given a socket file nobody answers on (a supervisor killed with SIGKILL leaves one)
        #expect(FileManager.default.createFile(atPath: location.runDirectory + "/supervisor.sock", contents: Data()))
        let stale = await probe.health(maxLagSeconds: 30, timeout: .milliseconds(200))
        let problem = try #require(stale.processesProblem)
        #expect(problem.hasPrefix("the supervisor does not answer ("), "\(problem)")
        #expect(problem.contains("processes as the log tells them"))
        #expect(!stale.healthy)
    }
}
