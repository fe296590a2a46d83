import Bus

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A read model: a fold over events, defined by the feature that owns those events, so that
/// the front-end, the CLI and replay share one definition.
public protocol Projection: Sendable {
    associatedtype Value: Sendable & Encodable

    /// The name `bureau show` knows it by.
    var name: String { get }
    /// The event types it folds over; others are not given to it.
    var inputTypes: [String] { get }
    var initialValue: Value { get }
    /// Folds one event in. An event that does not decode is passed over: a projection is a
    /// value with nothing to report to, so a corrupt payload of one of its types is folded as
    /// if it were of none (saying so would take `apply` telling its caller).
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
