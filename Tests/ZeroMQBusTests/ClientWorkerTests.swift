import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import TestSupport
import Testing
import ZeroMQBus

/// The client against replies no daemon of ours sends, played by a test (``ScriptedReadServer``).
@Suite(.timeLimit(.minutes(1)))
struct ClientWorkerTests {
    /// An envelope as the bus serves it: a producer's, stamped with its position.
    static func served(position: UInt64, id: EventID) throws -> Data {
        var envelope = Bureau_Envelope()
        envelope.id = Data(id.bytes)
        envelope.type = "bureau.test.Served"
        envelope.payload = Data("event \(position)".utf8)
        return EnvelopeStamp(seconds: 1_700_000_000, nanos: 0).stamped(
            try envelope.serializedData(), position: position)
    }

    /// An envelope in a read reply that cannot be read has no position to be delivered at: taken
    /// for one already delivered, the event would be lost unsaid. The client asks again from the
    /// same position, and delivers the event when it comes.
    @Test func anEnvelopeThatCannotBeReadInAReplyIsAskedForAgainNotPassedOver() async throws {
        let directory = try TemporaryDirectory("unreadable-reply")
        let server = try ScriptedReadServer(location: BusLocation(dataDirectory: directory.path))
        defer { server.close() }
        let client = try ZeroMQBusClient(
            location: server.location, options: .init(process: "reader"), logger: TestLogging.logger("reader"))
        defer { client.close() }
        let subscription = client.subscribe(EventFilter(prefixes: []), after: 0)
        let received = Task { () async throws -> StoredEvent? in
            for try await item in subscription {
                if case .event(let event) = item { return event }
            }
            return nil
        }
        defer { received.cancel() }

        let first = try await server.nextRequest(verb: WireProtocol.read)
        #expect(try Bureau_Bus_ReadRequest(serializedBytes: first.body).after == 0)
        try server.answer(first, envelopes: [Data([0xFF, 0xFF])], head: 1, scannedTo: 1)

        let second = try await server.nextRequest(verb: WireProtocol.read)
        #expect(
            try Bureau_Bus_ReadRequest(serializedBytes: second.body).after == 0,
            "the read is asked again from where it was, not past the envelope it could not read")
        let id = EventID(high: 7, low: 11)
        try server.answer(second, envelopes: [try Self.served(position: 1, id: id)], head: 1, scannedTo: 1)

        let event = try await Timeout.result(within: .seconds(10)) { try await received.value }
        #expect(event??.position == 1)
        #expect(event??.id == id)
    }
}
