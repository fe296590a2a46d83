import Bus
import Foundation
import Testing

struct StoredEventTests {
    @Test func aPayloadDecodesToItsBytesAtEveryLengthShortOrLongFromASharedBuffer() throws {
        // Short payloads are copied into the event and longer ones sliced from the envelope's
        // bytes: every length on both sides of the limit, each envelope a slice of one buffer
        // at an offset, as a log page or a bus batch holds them.
        let events = (0..<40).map { length in
            OutgoingEvent(
                type: "bureau.a.B", payload: Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ length) }))
        }
        let envelopes = try events.map { try $0.envelopeBytes(process: "p") }
        var buffer = Data([0xEE, 0xEE, 0xEE])
        var ranges: [Range<Int>] = []
        for envelope in envelopes {
            ranges.append(buffer.count..<buffer.count + envelope.count)
            buffer.append(envelope)
        }
        buffer.append(contentsOf: [0xEE, 0xEE])
        for (range, event) in zip(ranges, events) {
            let decoded = try StoredEvent(envelopeBytes: buffer[range])
            #expect(decoded.payload == event.payload, "a payload of \(event.payload.count) bytes")
            #expect(decoded.payload.count == event.payload.count)
            #expect(Array(decoded.payload) == Array(event.payload))
        }
    }

    @Test func aKnownTypeWhoseBytesDoNotDecodeIsToldApartFromAnUnknownType() {
        // Given a known type with bytes that are not one of it, and a type this build does not know,
        let damaged = StoredEvent(
            position: 3, id: .random(), type: "bureau.watchlist.PairAdded", commitTime: .zero, payload: Data([0xFF]))
        let later = StoredEvent(
            position: 4, id: .random(), type: "bureau.future.SomethingNew", commitTime: .zero, payload: Data([0x0A]))

        // then the damaged one says why, and the unknown one only that it is unknown.
        guard case .failure(.undecodable(let reason)) = damaged.payloadReading else {
            Issue.record("not undecodable: \(damaged.payloadReading)")
            return
        }
        #expect(!reason.isEmpty)
        #expect(damaged.summary.hasPrefix("(not a valid bureau.watchlist.PairAdded: \(reason); 1 bytes: /w==)"))
        #expect(damaged.jsonLine.contains("\"undecodable\":"))
        #expect(!damaged.jsonLine.contains("\"unknown\":true"))
        #expect(later.payloadReading == .failure(.unknownType))
        #expect(later.summary == "(unknown type, 1 bytes: Cg==)")
        #expect(later.jsonLine.contains("\"unknown\":true,\"payloadBase64\":\"Cg==\""))
    }
}
