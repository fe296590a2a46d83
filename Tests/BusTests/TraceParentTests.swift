import BureauSchemas
import Bus
import EventLog
import Foundation
import Testing

/// W3C trace context across the bus: the trace id derived from the correlation, the parent span
/// carried in the envelope's field 9, the sampled flag derived from its presence.
struct TraceParentTests {
    @Test func aHeaderReadsBackAsTheTraceAndSpanItWasWrittenFrom() {
        let parent = TraceParent(
            traceID: EventID(high: 0x0AF7_6519_16CD_43DD, low: 0x8448_EB21_1C80_319C), spanID: 0x00F0_67AA_0BA9_02B7)
        #expect(parent.header == "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01")
        #expect(TraceParent(header: parent.header) == parent)
        #expect(TraceParent(header: "00-0AF7651916CD43DD8448EB211C80319C-00F067AA0BA902B7-01") == parent)
        #expect(parent.traceHex == "0af7651916cd43dd8448eb211c80319c")
    }

    @Test func whatIsNotASampledVersion00HeaderNamingASpanIsNoParent() {
        let refused = [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00",  // not sampled
            "01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",  // another version
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // no trace
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",  // no span
            "00-0af7651916cd43dd8448eb211c80319-00f067aa0ba902b7-01",  // 31 digits
            "00-0af7651916cd43dd8448eb211c80319g-00f067aa0ba902b7-01",  // not hex
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7",
        ]
        for header in refused { #expect(TraceParent(header: header) == nil, "\(header)") }
    }

    @Test func anEventIsTracedExactlyWhenItCarriesAParentAndItsTraceIsItsCorrelation() throws {
        let correlation = EventID.random()
        var traced = OutgoingEvent(type: "bureau.a.B", payload: Data([1]), causation: 4, correlation: correlation)
        traced.traceParent = 0x1122_3344_5566_7788
        let decoded = try StoredEvent(envelopeBytes: try traced.envelopeBytes(process: "p"))
        #expect(decoded.traceParent == 0x1122_3344_5566_7788)
        #expect(TraceParent(of: decoded) == TraceParent(traceID: correlation, spanID: 0x1122_3344_5566_7788))
        #expect(decoded.envelope().traceParent == 0x1122_3344_5566_7788)
        // What generated code reads, and writes, is the same field.
        let generated = try Bureau_Envelope(serializedBytes: try traced.envelopeBytes(process: "p"))
        #expect(generated.traceParent == 0x1122_3344_5566_7788)
        #expect(try StoredEvent(envelopeBytes: try generated.serializedData()).traceParent == 0x1122_3344_5566_7788)
        let header = try EnvelopeScanner.scan(try traced.envelopeBytes(process: "p"))
        #expect(header.traceParent == 0x1122_3344_5566_7788)

        // Untraced, the envelope is the bytes it always was: no field 9 at all.
        let untraced = OutgoingEvent(type: "bureau.a.B", payload: Data([1]), causation: 4, correlation: correlation)
        let bytes = try untraced.envelopeBytes(process: "p")
        var expected = Bureau_Envelope()
        expected.id = Data(untraced.id.bytes)
        expected.type = "bureau.a.B"
        expected.producer.process = "p"
        expected.causation = 4
        expected.correlation = Data(correlation.bytes)
        expected.payload = Data([1])
        #expect(bytes == (try expected.serializedData()))
        #expect(TraceParent(of: try StoredEvent(envelopeBytes: bytes)) == nil)
        #expect(try EnvelopeScanner.scan(bytes).traceParent == nil)
    }

    @Test func aTraceParentOfTheWrongWireTypeIsAMalformedEnvelope() throws {
        var bytes = try OutgoingEvent(type: "bureau.a.B", payload: Data([1])).envelopeBytes(process: "p")
        bytes.append(contentsOf: [9 << 3, 0x05])  // field 9 as a varint
        #expect(throws: EnvelopeScanError.self) { try EnvelopeScanner.scan(bytes) }
        #expect(throws: BusError.self) { try StoredEvent(envelopeBytes: bytes) }
    }
}
