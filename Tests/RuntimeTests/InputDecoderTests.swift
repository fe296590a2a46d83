import BureauSchemas
import Bus
import EventLog
import Foundation
import Runtime
import SwiftProtobuf
import Testing

/// A reducer's inputs and a projection's payloads are the schemas' messages, decoded by
/// Bureau's own decoder; a message type from elsewhere still works, decoded by swift-protobuf.
struct InputDecoderTests {
    enum Input: Sendable, Equatable {
        case added(base: String)
        case timestamp(seconds: Int64)
    }

    static let decoder = InputDecoder<Input>()
        .on(Bureau_Watchlist_PairAdded.self) { .added(base: $0.base) }
        .on(Google_Protobuf_Timestamp.self) { .timestamp(seconds: $0.seconds) }

    static func event(_ message: some SwiftProtobuf.Message, position: UInt64 = 7) throws -> StoredEvent {
        StoredEvent(
            position: position, id: EventID.random(), type: type(of: message).protoMessageName, commitTime: .zero,
            payload: try message.serializedData())
    }

    @Test func aSchemaMessageAndAMessageFromElsewhereAreBothInputs() throws {
        let added = try Self.event(Bureau_Watchlist_PairAdded.with { $0.base = "EUR" })
        let timestamp = try Self.event(Google_Protobuf_Timestamp(seconds: 1_700_000_000, nanos: 0))
        #expect(try Self.decoder.decode(added) == .added(base: "EUR"))
        #expect(try Self.decoder.decode(timestamp) == .timestamp(seconds: 1_700_000_000))
        #expect(try timestamp.payload(as: Google_Protobuf_Timestamp.self)?.seconds == 1_700_000_000)
        #expect(try added.payload(as: Bureau_Watchlist_PairAdded.self)?.base == "EUR")
        #expect(try added.payload(as: Google_Protobuf_Timestamp.self) == nil)
    }

    @Test func aMessageFromElsewhereThatDoesNotDecodeIsMalformed() throws {
        var broken = try Self.event(Google_Protobuf_Timestamp(seconds: 5, nanos: 0))
        broken.payload = Data([0x08, 0xFF])
        #expect(throws: MalformedInput.self) { try Self.decoder.decode(broken) }
    }
}
