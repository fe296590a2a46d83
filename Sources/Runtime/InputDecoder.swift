import BureauSchemas
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
    /// In the order declared. A reducer has a few inputs: comparing names (a length and a
    /// memcmp) beats hashing one, which a host does for every event it reads. The names are
    /// kept apart from the decoders so that the search needs no generic type at run time.
    public var typeNames: [String] { names }
    @usableFromInline var names: [String] = []
    /// The decoder of each of ``typeNames``, at the same index.
    @usableFromInline var decoders: [@Sendable (Data) throws -> Input] = []

    public init() {}

    /// Adds an input: events of `type` are decoded and wrapped with `make`.
    ///
    /// Inlinable so that the decoder is compiled where the reducer declares its inputs, for
    /// its concrete message type: a generic closure decoded every payload through run-time
    /// type metadata and a thunk.
    @inlinable
    public func on<Message: PayloadDecodable>(
        _ type: Message.Type, _ make: @escaping @Sendable (Message) -> Input
    ) -> InputDecoder {
        adding(Message.protoMessageName) { data in make(try Message(payloadBytes: data)) }
    }

    /// Adds an input of a message type that is not one of the schemas' (so not
    /// ``PayloadDecodable``): decoded by swift-protobuf, at its speed.
    @inlinable
    public func on<Message: SwiftProtobuf.Message>(
        _ type: Message.Type, _ make: @escaping @Sendable (Message) -> Input
    ) -> InputDecoder {
        adding(Message.protoMessageName) { data in make(try Message(serializedBytes: data)) }
    }

    /// A copy with `decode` for events named `typeName`, replacing an earlier one.
    @inlinable
    func adding(_ typeName: String, _ decode: @escaping @Sendable (Data) throws -> Input) -> InputDecoder {
        var copy = self
        // The schemas' copy of the name, which events decoded from a stream carry too: comparing
        // the two then ends at their first word.
        let name = SchemaRegistry.sharedTypeName(typeName)
        if let index = copy.names.firstIndex(of: name) {
            copy.decoders[index] = decode
        } else {
            copy.names.append(name)
            copy.decoders.append(decode)
        }
        return copy
    }

    /// The input `event` carries; nil if its type is not an input. Throws if the payload does not decode.
    @inlinable
    public func decode(_ event: StoredEvent) throws -> Input? {
        guard let index = names.firstIndex(of: event.type) else { return nil }
        if let failure = event.upcastFailure {
            throw MalformedInput(position: event.position, type: event.type, reason: "\(failure)")
        }
        let decode = decoders[index]
        do {
            return try decode(event.payload)
        } catch {
            throw MalformedInput(position: event.position, type: event.type, reason: "\(error)")
        }
    }
}
