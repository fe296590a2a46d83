import Bus
import Guards

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
    /// Folds one event in. An event of one of its types that cannot be read (its payload does
    /// not decode, or its upcaster failed) throws, before `value` changes: the caller passes
    /// over it and says so (``ProjectionFold/passedOver``), as a reducer host reports a
    /// malformed input, rather than the read model losing a row without a word.
    func apply(_ event: StoredEvent, to value: inout Value) throws
    /// The value as text for a terminal: a line per row, every field from a payload through
    /// ``shown(_:)``.
    func render(_ value: Value) -> String
}

extension Projection {
    public var filter: EventFilter { EventFilter(prefixes: inputTypes) }

    /// Folds events in order into a value, passing over those it cannot read and counting them
    /// in `passedOver`.
    public func fold(_ events: some Sequence<StoredEvent>, into value: inout Value, passedOver: inout PassedOver) {
        let filter = self.filter
        for event in events where filter.matches(event.type) {
            do {
                try apply(event, to: &value)
            } catch {
                passedOver.record(event, error)
            }
        }
    }
}

extension Projection {
    /// A field of ``render(_:)`` that a payload said (a pair, a reason, a process's name), as a
    /// terminal may show it: every control character escaped, newlines too (``TerminalText``), so
    /// that it runs no escape sequence and forges no row.
    public static func shown(_ text: String) -> String {
        TerminalText.escaped(text)
    }
}
