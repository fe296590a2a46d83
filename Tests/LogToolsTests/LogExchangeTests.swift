import BureauSchemas
import Bus
import EventLog
import Foundation
import LogTools
import Testing

/// The lines of `log export` and `log import`: an export reads back as the same record, a
/// line written by hand becomes an envelope, and a bad line names what is wrong.
struct LogExchangeTests {
    static func event(_ position: UInt64, message: String = "timed out") throws -> (StoredEvent, Data) {
        var raised = Bureau_System_ErrorRaised()
        raised.module = "rates-adapter"
        raised.code = "fetch-failed"
        raised.message = message
        let event = StoredEvent(
            position: position, id: .random(), type: Bureau_System_ErrorRaised.protoMessageName,
            commitTime: CommitTime(seconds: 1_700_000_000, nanos: 5), producerProcess: "rates-1",
            producerModule: "rates-adapter", causation: position - 1, correlation: .random(),
            payload: try raised.serializedData())
        return (event, try event.envelope().serializedData())
    }

    static func line(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func anExportedLineReadsBackAsTheSameRecord() throws {
        let (event, envelope) = try Self.event(7)

        let record = try LogExchange.record(from: Self.line(LogExchange.line(event, envelope: envelope)), expecting: 7)

        #expect(record == LogRecord(position: 7, id: event.id, body: envelope))
    }

    @Test func aLineWithoutItsEnvelopeIsBuiltFromItsReadableFields() throws {
        let (event, envelope) = try Self.event(1)
        let exported = LogExchange.line(event, envelope: envelope)
        // What a person edits: the readable fields, without the base64 envelope.
        let edited = exported.replacingOccurrences(
            of: ",\"envelope\":\"\(envelope.base64EncodedString())\"", with: ""
        )
        .replacingOccurrences(of: "timed out", with: "refused")
        #expect(edited != exported)

        let record = try LogExchange.record(from: Self.line(edited), expecting: 1)

        let decoded = try StoredEvent(envelopeBytes: record.body)
        #expect(decoded.id == event.id)
        #expect(decoded.correlation == event.correlation)
        #expect(decoded.producerModule == "rates-adapter")
        #expect(try decoded.payload(as: Bureau_System_ErrorRaised.self)?.message == "refused")
    }

    @Test(arguments: [
        ("not json", "not JSON"),
        ("[1]", "not a JSON object"),
        ("{\"type\":\"x\"}", "no \"position\" (a whole number)"),
        ("{\"position\":3}", "position 3 where 2 should be: the excerpt has a hole or is out of order"),
        ("{\"position\":2,\"envelope\":\"***\"}", "\"envelope\" is not base64"),
        (
            "{\"position\":2,\"id\":\"x\",\"type\":\"bureau.nope.Unknown\",\"time\":\"2024-03-01T00:00:00Z\","
                + "\"payload\":{}}",
            "type bureau.nope.Unknown is unknown to this build; give its bytes as \"payloadBase64\""
        ),
        (
            "{\"position\":2,\"type\":\"bureau.system.ErrorRaised\",\"time\":\"yesterday\",\"payload\":{}}",
            "\"time\" 'yesterday' is not an RFC 3339 time"
        ),
    ])
    func aBadLineNamesWhatIsWrong(line: String, problem: String) {
        #expect(throws: LogExchange.Problem.self) { try LogExchange.record(from: Self.line(line), expecting: 2) }
        do {
            _ = try LogExchange.record(from: Self.line(line), expecting: 2)
        } catch {
            #expect("\(error)".hasPrefix(problem), "\(error)")
        }
    }

    @Test func anImportMustStartAtPositionOne() throws {
        let (event, envelope) = try Self.event(5)
        #expect {
            try LogExchange.record(from: Self.line(LogExchange.line(event, envelope: envelope)), expecting: 1)
        } throws: { error in
            "\(error)".contains("an import starts at position 1 (export with --from 1)")
        }
    }

    @Test func anEnvelopeThatDisagreesWithItsLineIsRefused() throws {
        let (event, envelope) = try Self.event(4)
        let (other, _) = try Self.event(4)
        let line = LogExchange.line(event, envelope: envelope)
            .replacingOccurrences(of: event.id.description, with: other.id.description)
        #expect {
            try LogExchange.record(from: Self.line(line), expecting: 4)
        } throws: { error in
            "\(error)".contains("the envelope's id is \(event.id) but the line says \(other.id)")
        }
    }
}
