import BureauSchemas
import Bus
import BusTesting
import EventLog
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

    @Test func aCrashLoopReportedBeforeTheBusIsUpIsPublishedInOrderOnceItIs() async throws {
        let bus = try TestBus()
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
}
