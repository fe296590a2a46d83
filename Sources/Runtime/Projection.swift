import Bus

/// A read model: a fold over events, defined by the feature that owns those events, so that
/// the front-end, the CLI and replay share one definition.
public protocol Projection: Sendable {
    associatedtype Value: Sendable & Encodable

    /// The name `bureau show` knows it by.
    var name: String { get }
    /// The event types it folds over; others are not given to it.
    var inputTypes: [String] { get }
    var initialValue: Value { get }
    /// Folds one event in. An event that does not decode is passed over.
    func apply(_ event: StoredEvent, to value: inout Value)
    /// The value as text for a terminal.
    func render(_ value: Value) -> String
}

extension Projection {
    public var filter: EventFilter { EventFilter(prefixes: inputTypes) }

    /// Folds events in order into a value.
    public func fold(_ events: some Sequence<StoredEvent>, into value: inout Value) {
        let filter = self.filter
        for event in events where filter.matches(event.type) {
            apply(event, to: &value)
        }
    }
}

/// A projection with its type erased, so a registry can hold several.
public struct AnyProjection: Sendable {
    public let name: String
    public let inputTypes: [String]
    private let makeFold: @Sendable () -> ProjectionFold

    public init<P: Projection>(_ projection: P) {
        name = projection.name
        inputTypes = projection.inputTypes
        makeFold = { ProjectionFold(projection) }
    }

    /// A fresh fold, starting from the projection's initial value.
    public func fold() -> ProjectionFold { makeFold() }
}

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

final class ValueBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
