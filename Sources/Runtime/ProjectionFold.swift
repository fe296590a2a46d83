import Bus
import Guards

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A projection's value being built, event by event, and the events it passed over because it
/// could not read them.
public final class ProjectionFold: @unchecked Sendable {
    @usableFromInline let applyEvent: (StoredEvent) throws -> Void
    @usableFromInline let renderValue: () -> String
    @usableFromInline let encodeValue: () throws -> String
    @usableFromInline let makeCopy: (PassedOver) -> ProjectionFold
    @usableFromInline let filter: EventFilter
    /// The events of its types it could not read, and passed over: what `show` and replay report.
    public var passedOver: PassedOver { passed }
    @usableFromInline var passed: PassedOver

    @inlinable
    convenience init<P: Projection>(_ projection: P) {
        self.init(projection, value: projection.initialValue)
    }

    // Inlinable, as is `AnyProjection.init`, so that these closures are compiled where the
    // projection's type is known (its feature module): compiled here, for any projection,
    // every event applied looked up the box's type metadata at run time.
    @inlinable
    init<P: Projection>(_ projection: P, value: P.Value, passedOver: PassedOver = PassedOver()) {
        let box = UncheckedBox(value)
        filter = projection.filter
        passed = passedOver
        applyEvent = { event in
            try projection.apply(event, to: &box.value)
        }
        renderValue = { projection.render(box.value) }
        encodeValue = { try ProjectionFold.json(box.value) }
        makeCopy = { passedOver in ProjectionFold(projection, value: box.value, passedOver: passedOver) }
    }

    /// A value as `json()` gives it.
    @usableFromInline
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    public func apply(_ event: StoredEvent) {
        guard filter.matches(event.type) else { return }
        do {
            try applyEvent(event)
        } catch {
            passed.record(event, error)
        }
    }

    public func render() -> String { renderValue() }
    public func json() throws -> String { try encodeValue() }

    /// An independent fold from the same value: applying events to one leaves the other as it was.
    public func copy() -> ProjectionFold { makeCopy(passedOver) }
}
