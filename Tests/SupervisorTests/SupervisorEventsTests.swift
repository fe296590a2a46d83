import BureauSchemas
import Bus
import BusTesting
import EventLog
import Foundation
import TestSupport
import Testing
import ZeroMQBus

@testable import Supervisor

/// The supervisor's own events: queued while the bus is down, published in order once it is up.
struct SupervisorEventsTests {
    @Test func aProcessLeftCrashLoopingIsAnErrorRaisedFromTheSupervisor() throws {
        let event = SupervisorEvents.crashLooping(process: "worker", failures: 5, log: "/data/logs/worker.log")
        #expect(event.type == Bureau_System_ErrorRaised.protoMessageName)
        #expect(event.module == "supervisor")
        let raised = try Bureau_System_ErrorRaised(serializedBytes: event.payload)
        #expect(raised.module == "supervisor")
        #expect(raised.process == "supervisor")
        #expect(raised.code == "crash-looping")
        #expect(
            raised.message == "worker failed 5 times in a row and is no longer restarted; see /data/logs/worker.log")
        #expect(raised.causation == 0)
    }

    /// An event is held and tried again while the bus may still take it (down, restarting, not
    /// answering, full), and dropped, said at error level, only when the bus refuses it for good.
    @Test(arguments: [
        (BusError.noAnswer(endpoint: "ipc://bus", seconds: 5), true),
        (BusError.refused(code: BusErrorCode(rawValue: "log-full"), message: "no space"), true),
        (BusError.connectionFailed(endpoint: "tcp://198.51.100.1:5555", reason: "unreachable"), true),
        (BusError.refused(code: .malformedRequest, message: "bad frames"), false),
        (BusError.refused(code: .tooLarge, message: "over the limit"), false),
        (BusError.requestTooLarge(bytes: 1 << 30, limit: 1 << 26), false),
        (BusError.unexpectedAnswer("2 results for 1 event"), false),
        (BusError.connectionRefused(endpoint: "tcp://198.51.100.1:5555", reason: "key refused"), false),
        (BusError.closed, false),
    ])
    func aFailedPublishIsTriedAgainUnlessRefusedForGood(error: BusError, retried: Bool) {
        #expect(SupervisorEvents.retries(after: error) == retried)
    }

    @Test func aCrashLoopReportedBeforeTheBusIsUpIsPublishedInOrderOnceItIs() async throws {
        let bus = try await TestBus()
        let location = bus.location
        let events = SupervisorEvents(logger: TestLogging.logger("supervisor")) { options in
            try ZeroMQBusClient(location: location, options: options, logger: TestLogging.logger("supervisor"))
        }
        var exited = Bureau_System_ProcessExited()
        exited.process = "worker"
        exited.pid = 100
        exited.exitCode = 1
        exited.message = "crash-looping: failed 5 times in a row"
        events.publish(exited)
        events.publish(SupervisorEvents.crashLooping(process: "worker", failures: 5, log: "/data/logs/worker.log"))

        events.connect()
        await events.drain()
        await events.finish()

        let observer = try bus.client()
        defer { observer.close() }
        let types = [Bureau_System_ProcessExited.protoMessageName, Bureau_System_ErrorRaised.protoMessageName]
        let stored = try await observer.collect(.types(types), count: 2, timeout: .seconds(10))
        #expect(stored.map(\.type) == types, "in the order they were queued")
        let raised = try #require(try stored.last?.payload(as: Bureau_System_ErrorRaised.self))
        #expect(raised.code == "crash-looping" && raised.message.hasPrefix("worker failed 5 times in a row"))
        #expect(stored.last?.producerModule == "supervisor" && stored.last?.producerProcess == "supervisor")
    }

    /// A control socket that cannot be opened disables `bureau ps`, `logs` and `down`: the
    /// deployment runs on, and says so on the bus, where `show errors` finds it.
    @Test func aControlSocketThatCannotBeOpenedIsAnErrorRaisedOnTheBus() async throws {
        let bus = try await TestBus()
        // Something that is not a socket holds the control socket's path: the bind fails.
        try FileManager.default.createDirectory(
            atPath: bus.location.runDirectory + "/supervisor.sock", withIntermediateDirectories: true)
        let supervisor = try Supervisor(
            configuration: .init(
                deployment: Deployment(processes: []), location: bus.location, executable: "/bin/false",
                console: false),
            logger: TestLogging.logger("supervisor"))

        #expect(supervisor.openControlServer() == nil)
        supervisor.events.connect()
        await supervisor.events.drain()
        await supervisor.events.finish()

        let observer = try bus.client()
        defer { observer.close() }
        let stored = try await observer.collect(
            .types([Bureau_System_ErrorRaised.protoMessageName]), count: 1, timeout: .seconds(10))
        let raised = try #require(try stored.first?.payload(as: Bureau_System_ErrorRaised.self))
        #expect(raised.code == "control-unavailable" && raised.module == "supervisor")
        #expect(raised.message.contains("bureau ps, logs and down cannot reach this deployment"), "\(raised.message)")
    }
}
