import Bus
import SwiftProtobuf

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which event types a reducer consumes, and how each becomes its `Input`.
///
///     InputDecoder<Input>()
///         .on(Bureau_Watchlist_PairAddRequested.self, Input.addRequested)
///         .on(Bureau_Rates_RatesPublished.self, Input.ratesPublished)
public struct InputDecoder<Input: Sendable>: Sendable {
    private var decoders: [String: @Sendable (Data) throws -> Input] = [:]
    /// In the order declared.
    public private(set) var typeNames: [String] = []

    public init() {}

    /// Adds an input: events of `type` are decoded and wrapped with `make`.
    public func on<Message: SwiftProtobuf.Message>(
        _ type: Message.Type, _ make: @escaping @Sendable (Message) -> Input
    ) -> InputDecoder {
        var copy = self
        copy.decoders[Message.protoMessageName] = { data in make(try Message(serializedBytes: data)) }
        copy.typeNames.append(Message.protoMessageName)
        return copy
    }

    /// The input `event` carries; nil if its type is not an input. Throws if the payload does not decode.
    public func decode(_ event: StoredEvent) throws -> Input? {
        guard let decode = decoders[event.type] else { return nil }
        do {
            return try decode(event.payload)
        } catch {
            throw MalformedInput(position: event.position, type: event.type, reason: "\(error)")
        }
    }
}
