import Foundation
import Guards
import SwiftProtobuf
import TestSupport
import Testing

@testable import BureauSchemas

/// `init(payloadBytes:)` must be `init(serializedBytes:)` but faster: the same value or the
/// same error for any bytes, and the fast decoder itself (no hand-over to swift-protobuf) for
/// every message Bureau's schemas encode.
// Decodes many thousands of payloads: on threads of its own, off the cooperative pool.
@Suite(.ownThreads) struct PayloadDecoderTests {
    /// Every message type of the schemas.
    static let types = SchemaRegistry.generatedMessageTypes

    @Test func aMessageOfEveryTypeDecodesWithoutSwiftProtobuf() throws {
        var random = Xoshiro256(seed: 15)
        for type in Self.types {
            var decodedFast = 0
            for _ in 0..<300 {
                let bytes = Self.fields(depth: 0, using: &random)
                guard let canonical = Self.knownFieldsOnly(type, bytes) else { continue }
                let fast = Self.fastDecodes(type, canonical)
                #expect(fast, "\(type.protoMessageName): \(canonical.map { String(format: "%02x", $0) }.joined())")
                decodedFast += 1
            }
            // Enough samples decoded for the check to mean something, for every type.
            #expect(decodedFast >= 50, "\(type.protoMessageName): only \(decodedFast) samples decoded")
        }
    }

    @Test func decodesWhatSwiftProtobufDecodesToTheSameValue() throws {
        var random = Xoshiro256(seed: 1)
        for type in Self.types {
            for _ in 0..<300 {
                Self.expectSameOutcome(type, Self.fields(depth: 0, using: &random))
            }
        }
    }

    @Test func damagedBytesGiveSwiftProtobufsOutcome() throws {
        var random = Xoshiro256(seed: 2)
        for type in Self.types {
            for _ in 0..<300 {
                var bytes = Self.fields(depth: 0, using: &random)
                guard !bytes.isEmpty else { continue }
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
                case 1: bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
                case 2:
                    bytes.insert(
                        UInt8.random(in: 0...255, using: &random), at: Int.random(in: 0...bytes.count, using: &random))
                default:
                    bytes = (0..<Int.random(in: 1...40, using: &random)).map { _ in
                        UInt8.random(in: 0...255, using: &random)
                    }
                }
                Self.expectSameOutcome(type, bytes)
            }
        }
    }

    @Test func edgeCasesSwiftProtobufDecidesAlike() throws {
        let added = Bureau_Watchlist_PairAdded.self
        let cases: [(String, [UInt8])] = [
            ("an unknown field, kept among the unknown fields", [0x0A, 0x03, 0x45, 0x55, 0x52, 0x78, 0x01]),
            ("a field of the wrong wire type", [0x08, 0x01]),
            ("text that is not UTF-8", [0x0A, 0x02, 0xC3, 0x28]),
            ("text with a character of two bytes", [0x0A, 0x02, 0xC3, 0xA9]),
            ("a tag padded to six bytes", [0x8A, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01, 0x41]),
            ("a tag padded to five bytes", [0x8A, 0x80, 0x80, 0x80, 0x00, 0x01, 0x41]),
            ("field number 0", [0x02, 0x00]),
            ("a group", [0x0B, 0x0C]),
            ("a length past the end", [0x0A, 0x05, 0x41]),
            ("a varint of eleven bytes", [0x78] + [UInt8](repeating: 0xFF, count: 10) + [0x01]),
            ("a field given twice, the later kept", [0x0A, 0x01, 0x41, 0x0A, 0x01, 0x42]),
            ("nothing", []),
        ]
        for (name, bytes) in cases {
            Self.expectSameOutcome(added, bytes, name)
        }
        // Repeated and nested messages, merged when given twice, and a timestamp.
        var rates = Bureau_Rates_RatesPublished()
        rates.base = "EUR"
        rates.asOf = "2024-05-17"
        for (currency, rate) in [("USD", "1.0866"), ("JPY", "169.21"), ("CHF", "0.9849")] {
            var entry = Bureau_Rates_Rate()
            entry.currency = currency
            entry.rate = rate
            rates.rates.append(entry)
        }
        let ratesBytes: [UInt8] = try rates.serializedBytes()
        Self.expectSameOutcome(Bureau_Rates_RatesPublished.self, ratesBytes, "rates")
        #expect(Self.fastDecodes(Bureau_Rates_RatesPublished.self, ratesBytes))
        var envelope = Bureau_Envelope()
        envelope.commitTime = Google_Protobuf_Timestamp(seconds: 1_700_000_000, nanos: 5)
        envelope.producer.process = "watchlist-host"
        var twice: [UInt8] = try envelope.serializedBytes()
        var other = Bureau_Envelope()
        other.producer.module = "watchlist"
        twice += try other.serializedBytes() as [UInt8]
        Self.expectSameOutcome(Bureau_Envelope.self, twice, "an envelope whose producer comes twice")
        #expect(Self.fastDecodes(Bureau_Envelope.self, twice))
        #expect(try Bureau_Envelope(payloadBytes: Data(twice)).producer.module == "watchlist")
    }

    // MARK: Helpers

    /// Whether the fast decoder decodes `bytes` as `type` by itself, to swift-protobuf's value.
    static func fastDecodes<M: PayloadDecodable>(_ type: M.Type, _ bytes: [UInt8]) -> Bool {
        guard let fast = bytes.withUnsafeBytes({ M.decodedByPayloadDecoder($0) }) else { return false }
        return (try? M(serializedBytes: bytes))?.isEqualTo(message: fast) == true
    }

    /// `bytes` decoded by swift-protobuf as `type` and encoded again without the fields the
    /// schema does not know, at any depth (JSON has no place for them); nil if swift-protobuf
    /// refuses the bytes.
    static func knownFieldsOnly<M: SwiftProtobuf.Message>(_ type: M.Type, _ bytes: [UInt8]) -> [UInt8]? {
        guard let message = try? M(serializedBytes: bytes), let json = try? message.jsonUTF8Data() else { return nil }
        return try? M(jsonUTF8Data: json).serializedBytes()
    }

    static func expectSameOutcome<M: PayloadDecodable>(
        _ type: M.Type, _ bytes: [UInt8], _ name: String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let expected = Result { try M(serializedBytes: bytes) }
        let actual = Result { try M(payloadBytes: Data(bytes)) }
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        switch (expected, actual) {
        case (.success(let expected), .success(let actual)):
            #expect(
                expected.isEqualTo(message: actual), "\(M.protoMessageName) \(name) \(hex)",
                sourceLocation: sourceLocation)
        case (.failure(let expected), .failure(let actual)):
            #expect(
                "\(expected)" == "\(actual)", "\(M.protoMessageName) \(name) \(hex)", sourceLocation: sourceLocation)
        default:
            Issue.record(
                "\(M.protoMessageName) \(name) \(hex): \(expected) but \(actual)", sourceLocation: sourceLocation)
        }
    }

    /// Protobuf fields of numbers 1 to 12 of random wire types: varints, text (some of it not
    /// ASCII), nested fields, eight- and four-byte values; a field of a type its number does not have is
    /// an unknown field to swift-protobuf.
    static func fields(depth: Int, using random: inout Xoshiro256) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: 0...6, using: &random) {
            let field = UInt64.random(in: 1...12, using: &random)
            switch Int.random(in: 0..<11, using: &random) {
            case 0..<3:
                bytes += varint(field << 3)
                bytes += varint(
                    Bool.random(using: &random) ? UInt64.random(in: 0...300, using: &random) : random.next())
            case 3..<6:
                let texts = ["EUR", "USD", "", "2024-05-17", "Zürich", "日本円", "€ 12.50", "watchlist-host"]
                let text = Array((texts.randomElement(using: &random) ?? "").utf8)
                bytes += varint(field << 3 | 2) + varint(UInt64(text.count)) + text
            case 6..<8 where depth < 2:
                let nested = fields(depth: depth + 1, using: &random)
                bytes += varint(field << 3 | 2) + varint(UInt64(nested.count)) + nested
            case 8:
                // Four bytes: a float or a fixed32, which no schema uses (yet).
                bytes += varint(field << 3 | 5)
                let bits = UInt32.random(in: 0...UInt32.max, using: &random)
                bytes += (0..<4).map { UInt8(truncatingIfNeeded: bits >> ($0 * 8)) }
            default:
                bytes += varint(field << 3 | 1)
                let bits = random.next()
                bytes += (0..<8).map { UInt8(truncatingIfNeeded: bits >> ($0 * 8)) }
            }
        }
        return bytes
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        return bytes + [UInt8(value)]
    }
}
