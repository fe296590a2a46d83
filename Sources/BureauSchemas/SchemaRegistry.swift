import SwiftProtobuf

/// Finds the Swift type of a message by its full protobuf name, the type name on the bus.
public enum SchemaRegistry {
    private static let byName: [String: any SwiftProtobuf.Message.Type] = Dictionary(
        uniqueKeysWithValues: generatedMessageTypes.map { ($0.protoMessageName, $0) })

    /// The message type named `typeName`, e.g. "bureau.watchlist.PairAdded"; nil if the schemas do not define it.
    public static func messageType(named typeName: String) -> (any SwiftProtobuf.Message.Type)? {
        byName[typeName]
    }

    /// The names of every event type a module publishes (the envelope and bus control messages excluded).
    public static var eventTypeNames: [String] {
        byName.keys.filter { name in
            !name.hasPrefix("bureau.bus.") && name != Bureau_Envelope.protoMessageName
                && name != Bureau_Producer.protoMessageName && !isHelperMessage(name)
        }.sorted()
    }

    /// Messages that only appear inside events (a rate inside `RatesPublished`).
    private static func isHelperMessage(_ name: String) -> Bool {
        name == Bureau_Rates_Rate.protoMessageName
    }
}
