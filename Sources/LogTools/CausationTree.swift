import Bus
import EventLog
import Guards

/// The events of one user action as a tree, each under the event that caused it: what
/// `bureau trace` prints, from the log alone.
///
/// Built from a ``CorrelationChain``'s events in log order. Each hop shows the process (and
/// module) that published it and the time since its cause was committed; a root (the request,
/// or an event of the chain whose cause is not in it) shows the time since the first event.
public struct CausationTree {
    /// One event of the tree.
    public struct Hop: Sendable, Equatable {
        public let event: StoredEvent
        /// The position of its cause in the tree; nil for a root.
        public let parent: UInt64?
        /// The time from its cause's commit (a root's: the first event's) to its own.
        public let sinceCause: Duration
    }

    /// The hops in log order.
    public private(set) var hops: [Hop] = []

    public init() {}

    /// Adds `event`, the next event of the chain in log order.
    public mutating func add(_ event: StoredEvent) {
        let cause = hops.last(where: { $0.event.position == event.causation })
        let since = cause?.event.commitTime ?? hops.first?.event.commitTime ?? event.commitTime
        hops.append(
            Hop(
                event: event, parent: cause.map { $0.event.position },
                sinceCause: event.commitTime - since))
    }

    public var isEmpty: Bool { hops.isEmpty }

    /// The processes that published its events, in order of first appearance.
    public var processes: [String] {
        var seen: [String] = []
        for hop in hops where !seen.contains(hop.event.producerProcess) { seen.append(hop.event.producerProcess) }
        return seen
    }

    /// From the first commit to the last.
    public var duration: Duration {
        guard let first = hops.first?.event.commitTime, let last = hops.map(\.event.commitTime).max() else {
            return .zero
        }
        return last - first
    }

    /// The tree as lines: each hop under its cause, children in log order, `marked` (an event
    /// id asked for) pointed at.
    public func lines(marking marked: EventID? = nil) -> [String] {
        var children: [UInt64: [Int]] = [:]
        var roots: [Int] = []
        for (index, hop) in hops.enumerated() {
            if let parent = hop.parent { children[parent, default: []].append(index) } else { roots.append(index) }
        }
        var lines: [String] = []
        func visit(_ index: Int, prefix: String, connector: String) {
            let hop = hops[index]
            let event = hop.event
            let producer =
                event.producerModule.isEmpty
                ? event.producerProcess : "\(event.producerProcess)/\(event.producerModule)"
            var line =
                "\(prefix)\(connector)#\(event.position) \(event.type)  \(producer)  "
                + Self.elapsed(hop.sinceCause)
            if event.id == marked { line += "  ◀" }
            lines.append(line)
            let below = children[event.position] ?? []
            let inner = prefix + (connector == "└─ " ? "   " : connector == "├─ " ? "│  " : "")
            for (offset, child) in below.enumerated() {
                visit(child, prefix: inner, connector: offset == below.count - 1 ? "└─ " : "├─ ")
            }
        }
        for root in roots { visit(root, prefix: "", connector: "") }
        return lines
    }

    /// `duration` for people, signed: "+412 µs", "+3.1 ms", "+2.40 s" (``Duration/scaledText()``).
    public static func elapsed(_ duration: Duration) -> String {
        (duration < .zero ? "" : "+") + duration.scaledText()
    }
}
