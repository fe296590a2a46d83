import BureauSchemas
import Bus
import FeatureTestSupport
import Foundation
import SwiftProtobuf
import TestSupport
import Testing
import WatchlistFeature
import ZeroMQBus

/// Events written by a later build, on the real bus with the real hosts: a field this build does
/// not know survives every hop byte for byte (re-published, exported and imported), and a type no
/// module knows is passed over by every host and shown as unknown by the tools, never a stop.
@Suite(.timeLimit(.minutes(3)))
struct ForwardCompatibilityTests {
    /// `message` with a field 99, a string, that no schema of this build has.
    static func withUnknownField(_ message: some SwiftProtobuf.Message) throws -> Data {
        var bytes = try message.serializedData()
        let text = Array("from a later build".utf8)
        bytes.append(contentsOf: [0x9A, 0x06, UInt8(text.count)] + text)  // field 99, length-delimited
        return bytes
    }

    @Test func unknownFieldsSurviveEveryHopAndUnknownTypesArePassedOverAndShown() async throws {
        let directory = try TemporaryDirectory("forward")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "later-build"))
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1172", "GBP": "0.8338"])))
        let host = try ChildProcess(
            BureauExecutable.path,
            ["run", "watchlist", "converter", "reservations", "alerts", "--data", bus.location.dataDirectory],
            directory: directory.path, name: "run", readiness: true)
        try await host.waitUntilReady()

        let later = OutgoingEvent(
            type: PairAddRequested.protoMessageName,
            payload: try Self.withUnknownField(PairAddRequested(base: "EUR", quote: "USD")))
        let unheard = OutgoingEvent(type: "bureau.future.SomethingNew", payload: Data([0x0A, 0x03, 0x6E, 0x65, 0x77]))
        // And a type a later build added to each running module's own package: each host's
        // subscription takes it in, and each passes over it.
        let inPackage = ["watchlist", "converter", "reservations", "alerts"].map { module in
            OutgoingEvent(type: "bureau.\(module).AddedByALaterBuild", payload: Data([0x0A, 0x03, 0x6E, 0x65, 0x77]))
        }
        let after = try OutgoingEvent(PairAddRequested(base: "EUR", quote: "GBP"))
        _ = try await client.publish([later, unheard] + inPackage + [after])
        // The hosts answered the request with the unknown field, passed over the unknown type,
        // and went on to answer the next request.
        let answered = try await ExactlyOnceTests.waitForAnswers(
            to: [later.id, after.id], client: client, timeout: .seconds(60))
        #expect(answered == 2)

        // Re-published by a consumer that decodes and re-encodes it: the unknown field is kept.
        let stored = try #require(try bus.records().first { $0.id == later.id })
        let event = try StoredEvent(envelopeBytes: stored.body)
        let decoded = try #require(try event.payload(as: PairAddRequested.self))
        #expect(!decoded.unknownFields.data.isEmpty)
        let again = try OutgoingEvent(decoded)
        #expect(try await client.publish(again).position != nil)
        let republished = try #require(try bus.records().first { $0.id == again.id })
        #expect(try StoredEvent(envelopeBytes: republished.body).payload == later.payload, "byte for byte")

        host.signal(SIGTERM)
        #expect(await host.exitCode() == 0)
        client.close()
        #expect(await bus.stop() == 0)
        let raised = try bus.records().compactMap { try StoredEvent(envelopeBytes: $0.body) }
            .filter { $0.type == Bureau_System_ErrorRaised.protoMessageName }
        #expect(raised.isEmpty, "nothing complained: \(raised.map(\.line))")

        // Exported and imported: the same records, byte for byte.
        let exported = try await bus.run(["log", "export"])
        #expect(exported.code == 0, "\(exported.err)")
        let file = directory.file("later.jsonl")
        try exported.out.write(toFile: file, atomically: true, encoding: .utf8)
        let copy = BusProcess(directory: directory.path, data: directory.file("copy"))
        let imported = try await copy.run(["log", "import", file])
        #expect(imported.code == 0, "\(imported.err)")
        #expect(try copy.records() == bus.records())

        // The tools show the unknown type as unknown, count it, and stop at nothing.
        let shown = try await bus.run(["log", "show"])
        #expect(shown.code == 0)
        #expect(shown.out.contains("bureau.future.SomethingNew (unknown type, 5 bytes: CgNuZXc=)"), "\(shown.out)")
        #expect(shown.out.contains("bureau.reservations.AddedByALaterBuild (unknown type, 5 bytes"), "\(shown.out)")
        let stats = try await bus.run(["log", "stats"])
        #expect(stats.out.contains("unknown    5 event(s) of 5 type(s) this build does not know"), "\(stats.out)")
        let verified = try await bus.run(["replay", "--verify"])
        #expect(verified.code == 0, "\(verified.out)")
        let watchlist = try await bus.run(["show", "watchlist", "--json"])
        #expect(watchlist.out.contains("EUR/USD") && watchlist.out.contains("EUR/GBP"))
    }
}
