import BureauSchemas
import Bus
import EventLog
import FeatureTestSupport
import Foundation
import TestSupport
import Testing
import ZeroMQ
import ZeroMQBus

/// Edges of README's "Wire protocol" that a client written from the text alone has to get
/// right, checked against the daemon with raw frames: an envelope too large inside a request
/// that is not, what a restart does to `follows`, and a read after the head.
@Suite(.timeLimit(.minutes(2)))
struct WireProtocolTextTests {
    static let publishHeader = [Data(WireProtocol.version.utf8), Data(WireProtocol.publish.utf8)]

    static func send(_ socket: ZMQSocket, _ request: UInt64, _ envelopes: [Data], follows: UInt64? = nil) throws {
        try socket.send(
            multipart: publishHeader + [WireProtocol.requestID(request), WireProtocol.batch(envelopes)]
                + (follows.map { [WireProtocol.requestID($0)] } ?? []))
    }

    /// The next reply: its verb, its request id, and the ack's results or the error's code.
    static func answer(
        _ socket: ZMQSocket
    ) async throws -> (
        verb: String, request: Data, results: [Bureau_Bus_PublishResult], error: String?
    ) {
        let reply = try #require(try await socket.nextMessage())
        try #require(reply.count == 4 && reply[0] == Data(WireProtocol.version.utf8), "\(reply)")
        let verb = String(decoding: reply[1], as: UTF8.self)
        if verb == WireProtocol.error {
            return (verb, reply[2], [], try Bureau_Bus_ErrorReply(serializedBytes: reply[3]).code)
        }
        return (verb, reply[2], try Bureau_Bus_PublishAck(serializedBytes: reply[3]).results, nil)
    }

    /// "Each envelope is judged on its own": one over 1 MiB in a request of 1 MiB and a bit is
    /// `REJECTED` with the reason, and the envelopes around it are stored.
    @Test func anEnvelopeOverTheLimitInAValidRequestIsRejectedAloneAndTheRestStored() async throws {
        let bus = try await TestBus()
        let socket = try BusDaemonTests.rawIngress(of: bus)
        defer { socket.close() }
        let large = TestEnvelope.bytes { $0.payload = Data(count: BusLimits.maxEnvelopeBytes) }
        try Self.send(socket, 1, [TestEnvelope.bytes(), large, TestEnvelope.bytes()])
        let answer = try await Self.answer(socket)
        #expect(answer.verb == WireProtocol.ack && answer.request == WireProtocol.requestID(1))
        #expect(answer.results.map(\.status) == [.committed, .rejected, .committed])
        #expect(answer.results.map(\.position) == [1, 0, 2])
        #expect(
            answer.results[1].reason
                == "envelope of \(large.count) bytes is over the limit of \(BusLimits.maxEnvelopeBytes)")
        #expect(try await bus.client().ping().head == 2)
    }

    /// "A daemon restart forgets every request it took": a request that follows one sent
    /// before the restart is refused `out-of-order` though that one was stored; the retry of
    /// the earlier one is a `DUPLICATE` at its old positions, and the refused one's envelopes
    /// sent again with a new request id and no `follows` are stored after it.
    @Test func aRestartForgetsTheRequestsItTookAndFollowsIsRefusedUntilSentAgain() async throws {
        let bus = try await TestBus()
        let first = [TestEnvelope.bytes(), TestEnvelope.bytes()]
        let second = [TestEnvelope.bytes()]
        do {
            let socket = try BusDaemonTests.rawIngress(of: bus)
            defer { socket.close() }
            try Self.send(socket, 1, first)
            #expect(try await Self.answer(socket).results.map(\.position) == [1, 2])
        }
        await bus.stop()
        try await bus.start()
        let socket = try BusDaemonTests.rawIngress(of: bus)
        defer { socket.close() }
        try Self.send(socket, 2, second, follows: 1)
        let refused = try await Self.answer(socket)
        #expect(refused.request == WireProtocol.requestID(2) && refused.error == BusErrorCode.outOfOrder.rawValue)
        #expect(try await bus.client().ping().head == 2, "nothing of it stored")

        try Self.send(socket, 1, first)
        let retried = try await Self.answer(socket)
        #expect(retried.results.map(\.status) == [.duplicate, .duplicate])
        #expect(retried.results.map(\.position) == [1, 2])
        try Self.send(socket, 3, second)
        #expect(try await Self.answer(socket).results.map(\.position) == [3])
    }

    /// "A read with `after` equal to the head is answered at once with no envelopes and
    /// `scanned_to = after`."
    @Test func aReadAtTheHeadIsAnsweredAtOnceWithNothing() async throws {
        let bus = try await TestBus()
        let client = try bus.client()
        defer { client.close() }
        _ = try await client.publish([OutgoingEvent(type: "bureau.test.Happened", payload: Data([1]))])
        let socket = try BusDaemonTests.rawDealer(to: bus.location.ipcEndpoints.read)
        defer { socket.close() }
        try socket.send(multipart: try BusDaemonTests.readRequest(after: 1, batched: true, id: 9))
        let reply = try #require(try await socket.nextMessage())
        #expect(reply.count == 5 && String(decoding: reply[1], as: UTF8.self) == WireProtocol.events)
        let header = try Bureau_Bus_ReadReply(serializedBytes: reply[3])
        #expect(header.head == 1 && header.scannedTo == 1 && reply[4].isEmpty)
    }
}
