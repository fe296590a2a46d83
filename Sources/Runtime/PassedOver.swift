import Bus

/// The events a read model was given and could not read (a payload that does not decode, an
/// upcaster that failed), which it passed over: counted, with the first few named, so that the
/// tools can say what a read model is missing instead of showing it as if it were whole.
public struct PassedOver: Sendable, Equatable, CustomStringConvertible {
    /// One event passed over.
    public struct Entry: Sendable, Equatable, CustomStringConvertible {
        public let position: UInt64
        /// The type it was to be read as.
        public let type: String
        public let reason: String

        public var description: String { "position \(position) (\(type)): \(reason)" }
    }

    /// How many entries are kept; the count goes on past them.
    public static let kept = 10

    public private(set) var count = 0
    /// The first ``kept``, in the order they were met.
    public private(set) var first: [Entry] = []

    public init() {}

    public var isEmpty: Bool { count == 0 }

    /// Counts `event`, which could not be read for `error`.
    public mutating func record(_ event: StoredEvent, _ error: any Error) {
        count += 1
        guard first.count < Self.kept else { return }
        // An upcast failure says its position itself; the entry gives it once.
        let reason =
            if let failure = error as? UpcastFailure {
                "\(failure.upcaster) failed on the \(failure.storedType) stored there: \(failure.reason)"
            } else {
                "\(error)"
            }
        first.append(Entry(position: event.position, type: event.type, reason: reason))
    }

    /// "2 events passed over: position 7 (bureau.…): …; position 9 (…): …", and how many more.
    public var description: String {
        let more = count > first.count ? "; and \(count - first.count) more" : ""
        return "\(count) event\(count == 1 ? "" : "s") passed over: "
            + first.map(\.description).joined(separator: "; ") + more
    }
}
