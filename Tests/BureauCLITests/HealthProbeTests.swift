import BureauSchemas
import Bus
import Foundation
import Testing

@testable import BureauCLI

/// What `bureau status` and `top` read from the log's system events.
struct HealthProbeTests {
    static func event(_ position: UInt64, _ type: String, payload: Data) -> StoredEvent {
        StoredEvent(
            position: position, id: .derived(module: "test", position: position, index: 0), type: type,
            commitTime: CommitTime(seconds: 1_700_000_000, nanos: 0), producerProcess: "reducers", payload: payload)
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
