import Bus

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A projection's value being built, event by event.
public final class ProjectionFold: @unchecked Sendable {
    @usableFromInline let applyEvent: (StoredEvent) -> Void
    @usableFromInline let renderValue: () -> String
    @usableFromInline let encodeValue: () throws -> String
    @usableFromInline let makeCopy: () -> ProjectionFold
    @usableFromInline let filter: EventFilter

    @inlinable
    convenience init<P: Projection>(_ projection: P) {
        self.init(projection, value: projection.initialValue)
    }

    // Inlinable, as is `AnyProjection.init`, so that these closures are compiled where the
    // projection's type is known (its feature module): compiled here, for any projection,
    // every event applied looked up the box's type metadata at run time.
    @inlinable
    init<P: Projection>(_ projection: P, value: P.Value) {
        let box = ValueBox(value)
        filter = projection.filter
        applyEvent = { event in
            projection.apply(event, to: &box.value)
        }
        renderValue = { projection.render(box.value) }
        encodeValue = { try ProjectionFold.json(box.value) }
        makeCopy = { ProjectionFold(projection, value: box.value) }
    }

    /// A value as `json()` gives it.
    @usableFromInline
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    public func apply(_ event: StoredEvent) {
        if filter.matches(event.type) { applyEvent(event) }
    }

    public func render() -> String { renderValue() }
    public func json() throws -> String { try encodeValue() }

    /// An independent fold from the same value: applying events to one leaves the other as it was.
    public func copy() -> ProjectionFold { makeCopy() }
}
