import BureauSchemas
import Bus
import EventLog
import InMemoryBus
import Logging
import Testing

/// The exception manager: every error becomes one well-formed `ErrorRaised`.
struct ErrorReporterTests {
    @Test func anErrorBecomesAnErrorRaisedNamingModuleProcessCodeAndPosition() throws {
        let reporter = ErrorReporter(module: "rates-adapter", process: "rates-1")
        let event = reporter.event(code: .fetchFailed, message: "timed out", causation: 42)
        #expect(event.type == Bureau_System_ErrorRaised.protoMessageName)
        #expect(event.module == "rates-adapter")
        #expect(event.causation == 42)
        let raised = try Bureau_System_ErrorRaised(serializedBytes: event.payload)
        #expect(raised.module == "rates-adapter")
        #expect(raised.process == "rates-1")
        #expect(raised.code == "fetch-failed")
        #expect(raised.message == "timed out")
        #expect(raised.causation == 42)
    }

    @Test func aMessageFromOutsideIsCutToWhatAnEventCarries() throws {
        let reporter = ErrorReporter(module: "m", process: "p")
        let event = reporter.event(code: .diskFull, message: String(repeating: "é", count: 50_000))
        let raised = try Bureau_System_ErrorRaised(serializedBytes: event.payload)
        #expect(raised.message.utf8.count <= EventText.defaultLimit)
        #expect(raised.message.hasSuffix("…"))
    }

    @Test func aReportIsPublishedOnTheBus() async throws {
        let bus = InMemoryBus()
        let connection = bus.connection(process: "test")
        await ErrorReporter(module: "bus", process: "bus").report(
            code: .logRecovered, message: "cut 3 bytes", on: connection, logger: Logger(label: "test"))
        let records = bus.records
        #expect(records.count == 1)
        let raised = try Bureau_System_ErrorRaised(serializedBytes: StoredEvent(envelopeBytes: records[0].body).payload)
        #expect(raised.code == "log-recovered")
    }

    @Test func textFromOutsideIsBoundedForEvents() {
        #expect(EventText.bounded("short") == "short")
        let cut = EventText.bounded(String(repeating: "é", count: 5000), limit: 100)
        #expect(cut.utf8.count <= 100 && cut.hasSuffix("…"))
    }
}
