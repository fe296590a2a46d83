import Bus

/// One line of the event pane: an event's position, short type and payload on one line.
public struct EventLine: Sendable, Equatable {
    public var position: UInt64
    /// The type without the "bureau." prefix, e.g. "watchlist.PairAdded".
    public var type: String
    public var summary: String

    public init(position: UInt64, type: String, summary: String) {
        self.position = position
        self.type = type
        self.summary = summary
    }

    public init(_ event: StoredEvent) {
        position = event.position
        type = event.type.hasPrefix("bureau.") ? String(event.type.dropFirst("bureau.".count)) : event.type
        summary = event.summary.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
