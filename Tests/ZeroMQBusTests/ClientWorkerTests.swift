import BureauSchemas
import Bus
import BusTesting
import EventLog
import Foundation
import Guards
import Logging
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

    /// A client reading from a ``ScriptedReadServer`` in a fresh directory, its reads timed out
    /// after `readTimeout`; the directory and server live as long as the value.
    struct ScriptedReader {
        let directory: TemporaryDirectory
        let server: ScriptedReadServer
        let client: ZeroMQBusClient

        init(_ name: String, readTimeout: Duration, logger: Logger = TestLogging.logger("reader")) throws {
            directory = try TemporaryDirectory(name)
            server = try ScriptedReadServer(location: BusLocation(dataDirectory: directory.path))
            var options = ZeroMQBusClient.Options(process: "reader")
            options.readTimeout = readTimeout
            client = try ZeroMQBusClient(location: server.location, options: options, logger: logger)
        }

        func close() {
            client.close()
            server.close()
        }
    }

    /// An envelope in a read reply that cannot be read has no position to be delivered at: taken
    /// for one already delivered, the event would be lost unsaid. The client asks again from the
    /// same position, and delivers the event when it comes.
    @Test func anEnvelopeThatCannotBeReadInAReplyIsAskedForAgainNotPassedOver() async throws {
        let log = CapturedLog()
        // Longer than any wait for the test's answers on a loaded machine: a read is asked
        // again only because its reply could not be read.
        let reader = try ScriptedReader("unreadable-reply", readTimeout: .seconds(5), logger: log.logger("reader"))
        defer { reader.close() }
        let (server, client) = (reader.server, reader.client)
        let collector = EventCollector(client, EventFilter(prefixes: []))
        defer { collector.stop() }

        let first = try await server.nextRequest(verb: WireProtocol.read)
        #expect(try Bureau_Bus_ReadRequest(serializedBytes: first.body).after == 0)
        try server.answer(first, envelopes: [Data([0xFF, 0xFF])], head: 1, scannedTo: 1)

        // Asked again from the same position (every time, should a read time out after all),
        // and given the event, until it is delivered.
        let id = EventID(high: 7, low: 11)
        var event: StoredEvent?
        for _ in 0..<5 where event == nil {
            let again = try await server.nextRequest(verb: WireProtocol.read)
            #expect(
                try Bureau_Bus_ReadRequest(serializedBytes: again.body).after == 0,
                "the read is asked again from where it was, not past the envelope it could not read")
            try server.answer(again, envelopes: [try Self.served(position: 1, id: id)], head: 1, scannedTo: 1)
            event = try await collector.wait(until: .now + .seconds(6)) { !$0.isEmpty }.first
        }
        #expect(event?.position == 1)
        #expect(event?.id == id)
        #expect(
            log.lines.contains { $0.level == .warning && $0.message.contains("cannot be read; reading again") },
            "the client said why it read again: \(log.lines.map(\.message))")
    }

    /// A bus slower than the read timeout: the client asks again, and the first read's reply,
    /// when it comes, is taken all the same (the subscription is still where it asked from).
    /// Taking only the newest read's reply, a client whose bus is always that slow never got on
    /// (CI found it: a loaded machine answered every read of a test late). The reply comes after
    /// the client asked again at least once, and on a loaded machine after many more: seconds
    /// passed in CI before the test first heard the client.
    @Test func aReplyThatComesAfterTheReadTimeoutIsTakenWhileTheReadStillStands() async throws {
        let reader = try ScriptedReader("late-reply", readTimeout: .milliseconds(200))
        defer { reader.close() }
        let (server, client) = (reader.server, reader.client)
        // Collects until the subscription has caught up.
        let collector = EventCollector(client, EventFilter(prefixes: [])) { _ in true }
        defer { collector.stop() }

        let first = try await server.nextRequest(verb: WireProtocol.read)
        // Unanswered past the timeout: the client asks again, from the same position.
        let second = try await server.nextRequest(verb: WireProtocol.read)
        #expect(try Bureau_Bus_ReadRequest(serializedBytes: second.body).after == 0)
        let id = EventID(high: 3, low: 5)
        try server.answer(first, envelopes: [try Self.served(position: 1, id: id)], head: 1, scannedTo: 1)
        let events = try await collector.wait(until: .now + .seconds(10)) { _ in false }
        #expect(events.map(\.position) == [1])
        #expect(events.map(\.id) == [id])
    }

    /// A bus that keeps serving an envelope this client cannot read: the subscription does not
    /// ask for ever, it fails after a few replies, naming the position it could not read past.
    @Test func aBusThatKeepsServingAnUnreadableEnvelopeFailsTheSubscriptionSayingWhere() async throws {
        let reader = try ScriptedReader("unreadable-for-ever", readTimeout: .milliseconds(500))
        defer { reader.close() }
        let (server, client) = (reader.server, reader.client)
        let subscription = client.subscribe(EventFilter(prefixes: []), after: 0)
        let ended = Task { () async -> (any Error)? in
            do {
                for try await _ in subscription {}
                return nil
            } catch {
                return error
            }
        }
        defer { ended.cancel() }
        // Every read is answered with the same unreadable envelope, until the client stops asking.
        let answering = Task {
            for _ in 0..<20 {
                guard let read = try? await server.nextRequest(verb: WireProtocol.read) else { return }
                try server.answer(read, envelopes: [Data([0xFF, 0xFF])], head: 1, scannedTo: 1)
            }
        }
        let failure = await Timeout.result(within: .seconds(30)) { await ended.value }
        answering.cancel()
        _ = try? await answering.value
        guard case .some(.some(BusError.unexpectedAnswer(let reason))) = failure else {
            Issue.record(
                "expected the subscription to fail with an unexpected answer, got \(String(describing: failure))")
            return
        }
        #expect(reason.contains("after position 0"), "\(reason)")
        #expect(reason.contains("cannot be read"), "\(reason)")
    }
}
