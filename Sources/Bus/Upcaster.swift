import SwiftProtobuf

/// How an event of an older shape reads as today's: a typed, pure function from the old message
/// to the new, which a feature declares with the events it owns (Schemas/README.md,
/// "Changing an event").
///
/// It runs on read, before any reducer, projection, replay, tool or subscriber sees the event;
/// the stored bytes never change. Upcasters compose: an event of `A` read through `A → B` and
/// `B → C` is read as a `C`. Each old shape has one upcaster; ``EventUpcasting`` refuses a set
/// of them with a gap, a cycle or two for one shape.
///
/// A new shape is a new message with its own type name (`ReservationAcceptedV2`): the type name
/// says which shape an event has, in the log and on the wire.
public protocol Upcaster: Sendable {
    /// The shape as stored.
    associatedtype Old: SwiftProtobuf.Message
    /// The shape it reads as: today's, or the next step of a chain.
    associatedtype New: SwiftProtobuf.Message

    /// What changed between the two shapes, for the tools and the docs ("a reservation carries
    /// its commission; one accepted before commissions carries none").
    var change: String { get }

    /// The type name events of the old shape carry: `Old`'s, unless the type was renamed and
    /// its message left the schemas (``RenamedEvent``).
    var storedType: String { get }

    /// The name tools and errors give it: its type's, by default.
    var name: String { get }

    /// Today's message for an old one. Pure: what it needs comes from `old` and `event` (its
    /// position, commit time, producer); it throws when `old` cannot be read as `New`.
    func upcast(_ old: Old, of event: StoredEvent) throws -> New
}

extension Upcaster {
    public var storedType: String { Old.protoMessageName }
    /// The type name they read as.
    public var readType: String { New.protoMessageName }

    public var name: String { String(describing: Self.self) }

    /// This upcaster's step, its types erased, for ``EventUpcasting``.
    var step: EventUpcasting.Step {
        EventUpcasting.Step(
            from: storedType, to: readType, name: name, change: change,
            apply: { event in try self.upcast(Old(serializedBytes: event.payload), of: event).serializedData() })
    }
}

/// A type renamed, its message otherwise the same: events stored under `storedType` read as
/// `Event`, their bytes unchanged. What a line of `Schemas/retired.txt` needs when the old
/// message has left the schemas.
public struct RenamedEvent<Event: SwiftProtobuf.Message>: Upcaster {
    public let storedType: String

    public init(from storedType: String, to event: Event.Type) {
        self.storedType = storedType
    }

    public var change: String { "\(storedType) is now called \(Event.protoMessageName)" }

    public var name: String { "RenamedEvent(\(storedType))" }

    public func upcast(_ old: Event, of event: StoredEvent) throws -> Event { old }
}
