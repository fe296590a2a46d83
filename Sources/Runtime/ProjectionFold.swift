import Bus

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A projection's value being built, event by event.
public final class ProjectionFold: @unchecked Sendable {
    private let applyEvent: (StoredEvent) -> Void
    private let renderValue: () -> String
    private let encodeValue: () throws -> String
    private let makeCopy: () -> ProjectionFold
    private let filter: EventFilter

    convenience init<P: Projection>(_ projection: P) {
        self.init(projection, value: projection.initialValue)
    }

    private init<P: Projection>(_ projection: P, value: P.Value) {
        let box = ValueBox(value)
        filter = projection.filter
        applyEvent = { event in
            projection.apply(event, to: &box.value)
        }
        renderValue = { projection.render(box.value) }
        encodeValue = {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            return String(decoding: try encoder.encode(box.value), as: UTF8.self)
        }
        makeCopy = { ProjectionFold(projection, value: box.value) }
    }

    public func apply(_ event: StoredEvent) {
        if filter.matches(event.type) { applyEvent(event) }
    }

    public func render() -> String { renderValue() }
    public func json() throws -> String { try encodeValue() }

    /// An independent fold from the same value: applying events to one leaves the other as it was.
    public func copy() -> ProjectionFold { makeCopy() }
}
