import BureauSchemas
import Bus
import EventLog
import Foundation
import Runtime
import SwiftProtobuf
import SystemFeature
import Testing

struct ErrorsProjectionTests {
    static func event(_ position: UInt64, _ message: some SwiftProtobufMessage) -> StoredEvent {
        StoredEvent(
            position: position, id: .random(), type: type(of: message).protoMessageName,
            commitTime: CommitTime(seconds: 1_700_000_000 + Int64(position), nanos: 0),
            payload: (try? message.serializedData()) ?? Data())
    }

    @Test func errorsAreListedNewestFirstAndBounded() throws {
        let projection = ErrorsProjection(limit: 2)
        var value = projection.initialValue
        for position in 1...3 as ClosedRange<UInt64> {
            var raised = ErrorRaised()
            raised.module = "rates-adapter"
            raised.code = "fetch-failed"
            raised.message = "HTTP 500 (\(position))"
            try projection.apply(Self.event(position, raised), to: &value)
        }
        #expect(value.errors.map(\.position) == [3, 2])
        #expect(projection.render(value).contains("rates-adapter fetch-failed: HTTP 500 (3)"))
    }

    @Test func processesShowTheirLastExit() throws {
        let projection = ProcessesProjection()
        var value = projection.initialValue
        var started = ProcessStarted()
        started.process = "reducers"
        started.pid = 42
        try projection.apply(Self.event(1, started), to: &value)
        var exited = ProcessExited()
        exited.process = "reducers"
        exited.pid = 42
        exited.signal = 9
        try projection.apply(Self.event(2, exited), to: &value)
        #expect(value.processes.first?.running == false)
        #expect(value.processes.first?.lastExit == "signal SIGKILL (9)")
    }
}

typealias SwiftProtobufMessage = SwiftProtobuf.Message
