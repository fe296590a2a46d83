import BureauSchemas
import Foundation
import SwiftProtobuf
import Testing

@testable import Bus
@testable import ZeroMQBus

struct PublishAckEncodingTests {
    @Test func handEncodedAcknowledgementsDecodeAsTheGeneratedTypeWritesThem() throws {
        let results: [Bureau_Bus_PublishResult] = [
            .committed(1), .committed(300), .duplicate(70_000), .rejected("the envelope's id is all zeros"),
            .committed(UInt64.max), .rejected(String(repeating: "é", count: 200)),
        ]
        for head in [0, 1, 12_345_678_901] as [UInt64] {
            let bytes = PublishAckEncoding.encode(results, head: head)
            var expected = Bureau_Bus_PublishAck()
            expected.results = results
            expected.head = head
            #expect(bytes == (try expected.serializedData()))
            #expect(try Bureau_Bus_PublishAck(serializedBytes: bytes) == expected)
            #expect(PublishAckEncoding.decode(bytes) == expected)
        }
    }

    @Test func handDecodingSkipsUnknownFieldsAndRefusesBrokenBytes() throws {
        var ack = Bureau_Bus_PublishAck()
        ack.results = [.committed(7), .rejected("no")]
        ack.head = 7
        // Field 9, a varint, before and inside the message: a newer daemon's addition.
        var result = try ack.results[0].serializedData()
        result.append(contentsOf: [0x48, 0x05])
        var bytes = Data([0x48, 0x01, 0x0A, UInt8(result.count)]) + result
        bytes += try {
            var rest = ack; rest.results.removeFirst(); return try rest.serializedData()
        }()
        #expect(PublishAckEncoding.decode(bytes) == ack)

        let whole = try ack.serializedData()
        #expect(PublishAckEncoding.decode(whole.dropLast()) == nil, "cut short")
        #expect(PublishAckEncoding.decode(Data([0x0A, 0x02, 0x1A, 0x01])) == nil, "reason longer than its result")
        #expect(PublishAckEncoding.decode(Data([0x0A, 0x03, 0x1A, 0x01, 0xFF])) == nil, "reason not UTF-8")
    }

    @Test(
        arguments: [
            [0x11, 0, 0, 0, 0, 0, 0, 0, 0],  // head as a fixed64
            [0x08, 0x05],  // results as a varint
            [0x1B, 0x1C, 0x10, 0x04],  // an empty group, then head 4
            [0x0A, 0x04, 0x09, 0, 0, 0],  // a result whose status is cut short
        ] as [[UInt8]])
    func bytesOfAnotherShapeDecodeAsSwiftProtobufDecodesThem(bytes: [UInt8]) {
        var generated = try? Bureau_Bus_PublishAck(serializedBytes: Data(bytes))
        generated?.unknownFields = UnknownStorage()
        #expect(PublishAckEncoding.decode(Data(bytes)) == generated)
    }
}

struct EnvelopeEncodingTests {
    @Test func handEncodedEnvelopesAreTheBytesGeneratedCodeWrites() throws {
        let events = [
            OutgoingEvent(type: "bureau.a.B", payload: Data("payload".utf8), module: "a", causation: 42),
            OutgoingEvent(type: "bureau.a.B", payload: Data(), module: "", causation: 0),
            OutgoingEvent(type: "bureau.a.Ünïcode", payload: Data(count: 300), module: "m", causation: .max),
            OutgoingEvent(type: "bureau.a.B", payload: Data(), module: String(repeating: "m", count: 200)),
        ]
        for (event, process) in zip(
            events + events, Array(repeating: "proc", count: events.count) + Array(repeating: "", count: events.count))
        {
            var expected = Bureau_Envelope()
            expected.id = Data(event.id.bytes)
            expected.type = event.type
            // An empty producer is left out, as an unset message field is.
            if !process.isEmpty || !event.module.isEmpty {
                expected.producer.process = process
                expected.producer.module = event.module
            }
            expected.causation = event.causation
            expected.correlation = Data(event.correlation.bytes)
            expected.payload = event.payload
            #expect(try event.envelopeBytes(process: process) == expected.serializedData())
            let decoded = try StoredEvent(envelopeBytes: try event.envelopeBytes(process: process))
            #expect(decoded.id == event.id && decoded.type == event.type && decoded.payload == event.payload)
            #expect(decoded.producerProcess == process && decoded.causation == event.causation)
        }
    }

    @Test func aStampedEnvelopeDecodesWithItsPositionAndCommitTime() throws {
        let event = OutgoingEvent(type: "bureau.a.B", payload: Data("x".utf8))
        let stamped = EnvelopeStamp(seconds: 1_700_000_000, nanos: 123_456_789)
            .stamped(try event.envelopeBytes(process: "p"), position: 300)
        let decoded = try StoredEvent(envelopeBytes: stamped)
        #expect(decoded.position == 300)
        #expect(decoded.commitTime == CommitTime(seconds: 1_700_000_000, nanos: 123_456_789))
        let generated = try Bureau_Envelope(serializedBytes: stamped)
        #expect(generated.position == 300 && generated.commitTime.nanos == 123_456_789)
    }

    @Test func envelopesStampedIntoOneBufferDecodeEachWithItsOwnPositionAcrossVarintLengths() throws {
        let stamp = EnvelopeStamp(seconds: 1_700_000_000, nanos: 5)
        // Positions whose varints take one, two, three and ten bytes, and the step between.
        for first: UInt64 in [1, 126, 16_382, UInt64.max - 3] {
            let events = (0..<4).map { index in
                OutgoingEvent(type: "bureau.a.B\(index)", payload: Data(repeating: UInt8(index), count: index * 100))
            }
            let envelopes = try events.map { try $0.envelopeBytes(process: "p") }
            var buffer: [UInt8] = [0xEE]
            var ranges: [Range<Int>] = []
            for (index, envelope) in envelopes.enumerated() {
                let start = buffer.count
                envelope.withUnsafeBytes { stamp.append($0, position: first + UInt64(index), to: &buffer) }
                #expect(buffer.count - start <= envelope.count + stamp.maxBytes)
                ranges.append(start..<buffer.count)
            }

            #expect(buffer[0] == 0xEE, "what the buffer held is kept")
            for (index, (range, event)) in zip(ranges, events).enumerated() {
                let bytes = Data(buffer[range])
                let decoded = try StoredEvent(envelopeBytes: bytes)
                #expect(decoded.position == first + UInt64(index))
                #expect(decoded.id == event.id && decoded.type == event.type && decoded.payload == event.payload)
                #expect(decoded.commitTime == CommitTime(seconds: 1_700_000_000, nanos: 5))
                #expect(bytes == stamp.stamped(envelopes[index], position: first + UInt64(index)))
            }
        }
    }
}
