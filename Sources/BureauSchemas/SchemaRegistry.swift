import SwiftProtobuf

/// Finds the Swift type of a message by its full protobuf name, the type name on the bus.
public enum SchemaRegistry {
    private static let byName: [String: any SwiftProtobuf.Message.Type] = Dictionary(
        uniqueKeysWithValues: generatedMessageTypes.map { ($0.protoMessageName, $0) })

    /// The message type named `typeName`, e.g. "bureau.watchlist.PairAdded"; nil if the schemas do not define it.
    public static func messageType(named typeName: String) -> (any SwiftProtobuf.Message.Type)? {
        byName[typeName]
    }

    private static let typeNames: [String: String] = Dictionary(
        uniqueKeysWithValues: generatedTypeNames.map { ($0, $0) })

    /// `name` as the schemas' own copy of it, a string literal; nil if the schemas define no
    /// such type.
    ///
    /// A literal is immortal: copying it, releasing it, comparing it with itself touch no
    /// reference count. A type name is longer than a small string, and one is copied into every
    /// event decoded: with a name made at run time, the thread that decodes events and the one
    /// that folds them each counted references on the same few objects, a cache line passed
    /// between the cores at every event. Names taken from here share one copy, so comparing two
    /// of them (an event's type with a reducer's inputs) ends at their first word.
    public static func knownTypeName(_ name: String) -> String? {
        typeNames[name]
    }

    /// `name` as the schemas' literal (``knownTypeName(_:)``) when they define such a type, else
    /// `name` itself: for a name kept to compare with events' type names.
    public static func sharedTypeName(_ name: String) -> String {
        typeNames[name] ?? name
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
