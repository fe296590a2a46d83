#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The upcasters a build knows, checked as one set, and what reading an event through them gives.
///
/// A composition root builds it from every feature's upcasters and the types its code reads
/// (``init(_:readTypes:)``) and hands it to whatever reads events: the bus clients (every
/// subscription), the log tools, replay. It refuses a set with two upcasters for one shape, a
/// cycle, or a chain that ends at a type nothing in the build reads (a gap: an upcaster
/// missing), naming them, so that a process with such a set refuses to start.
public struct EventUpcasting: Sendable {
    /// One upcaster, its types erased.
    struct Step: Sendable {
        let from: String
        let to: String
        let name: String
        let change: String
        let apply: @Sendable (StoredEvent) throws -> Data
    }

    /// Few (one per retired shape): a list searched in order costs less than a lookup.
    private let steps: [Step]
    /// Bit `n % 64` set for each stored type `n` UTF-8 bytes long that an upcaster reads: most
    /// events' types have a length no upcaster's does, and are passed through on one test,
    /// inlined into the reader, without a call or a string compared.
    @usableFromInline let storedLengths: UInt64

    /// No upcaster: every event reads as stored.
    public static let none = EventUpcasting(steps: [])

    private init(steps: [Step]) {
        self.steps = steps
        storedLengths = steps.reduce(0) { $0 | (1 &<< UInt64($1.from.utf8.count % 64)) }
    }

    /// The set of `upcasters`, checked against `readTypes`, the type names this build's code
    /// reads (reducers' inputs, projections', adapters'): every chain must end at one of them.
    public init(_ upcasters: [any Upcaster], readTypes: Set<String>) throws(UpcastingError) {
        let steps = upcasters.map(\.step)
        var problems: [String] = []
        var byOrigin: [String: Step] = [:]
        for step in steps {
            if let other = byOrigin[step.from] {
                problems.append("two upcasters read \(step.from): \(other.name) and \(step.name)")
            } else {
                byOrigin[step.from] = step
            }
        }
        for step in steps where byOrigin[step.from]?.name == step.name {
            var path = [step.from]
            var current = step
            while true {
                if let index = path.firstIndex(of: current.to) {
                    // The same cycle, met from each of its types, is told once: from its first name.
                    var cycle = Array(path[index...])
                    let start = cycle.indices.min(by: { cycle[$0] < cycle[$1] }) ?? 0
                    cycle = Array(cycle[start...] + cycle[..<start])
                    problems.append("the upcasters go round: " + (cycle + cycle.prefix(1)).joined(separator: " → "))
                    break
                }
                guard let next = byOrigin[current.to] else {
                    if !readTypes.contains(current.to) {
                        problems.append(
                            "\(current.to), which \(current.name) makes of \(current.from), is read by nothing in this "
                                + "build and has no upcaster of its own: an upcaster is missing")
                    }
                    break
                }
                path.append(current.to)
                current = next
            }
        }
        guard problems.isEmpty else { throw UpcastingError(problems: Array(Set(problems)).sorted()) }
        self.init(steps: steps)
    }

    /// Whether no event is upcast.
    public var isEmpty: Bool { steps.isEmpty }

    /// The stored types read as another, each with the type it reads as at the end of its chain.
    public var readAs: [(stored: String, read: String, change: String)] {
        steps.map { step in (step.from, finalType(from: step.from), step.change) }
    }

    /// Whether an upcaster reads events stored as `type`; when none does, such an event reads as
    /// stored.
    @inlinable
    public func upcasts(_ type: String) -> Bool {
        (storedLengths &>> UInt64(type.utf8.count % 64)) & 1 != 0 && hasStep(from: type)
    }

    @usableFromInline func hasStep(from type: String) -> Bool {
        step(from: type) != nil
    }

    /// Calls `body` with `event` as this build reads it: the event itself, not a copy, when no
    /// upcaster reads its type (almost every event; a copy retains its strings and payload once
    /// more, which `bureau-bench replay` measured at a tenth of replay's speed).
    @inlinable
    public func reading<Result>(_ event: StoredEvent, _ body: (StoredEvent) throws -> Result) rethrows -> Result {
        upcasts(event.type) ? try body(upcast(event)) : try body(event)
    }

    /// `event` as this build reads it: as stored, or upcast through every step of its chain
    /// (``StoredEvent/upcast`` says so). An upcaster that throws leaves the payload as stored and
    /// marks the event ``StoredEvent/Upcast/failed(storedType:upcaster:reason:)``, with the type it
    /// was to become, so that what reads that type reports it as a malformed input.
    public func upcast(_ event: StoredEvent) -> StoredEvent {
        guard !steps.isEmpty, var step = step(from: event.type) else { return event }
        var read = event
        var count = 0
        while true {
            do {
                read.payload = try step.apply(read)
            } catch {
                var failed = event
                failed.type = finalType(from: event.type)
                failed.upcast = .failed(storedType: event.type, upcaster: step.name, reason: "\(error)")
                return failed
            }
            read.type = step.to
            count += 1
            guard let next = self.step(from: read.type) else { break }
            step = next
        }
        read.upcast = .upcast(storedType: event.type, steps: count)
        return read
    }

    /// `filter` with the stored types that read as a type it matches: what a subscription must
    /// ask the bus for to be given old events too.
    public func widening(_ filter: EventFilter) -> EventFilter {
        guard !steps.isEmpty, !filter.prefixes.isEmpty else { return filter }
        let older = steps.map(\.from).filter { stored in
            !filter.matches(stored) && filter.matches(finalType(from: stored))
        }
        return older.isEmpty ? filter : EventFilter(prefixes: filter.prefixes + older)
    }

    private func step(from type: String) -> Step? {
        for step in steps where step.from.utf8.count == type.utf8.count && step.from == type { return step }
        return nil
    }

    private func finalType(from type: String) -> String {
        var current = type
        // Bounded: the set has no cycle (checked when made).
        for _ in 0...steps.count {
            guard let step = step(from: current) else { break }
            current = step.to
        }
        return current
    }
}

/// A set of upcasters that cannot be used: each problem names the types and upcasters.
public struct UpcastingError: Error, CustomStringConvertible, Equatable {
    public let problems: [String]

    public var description: String {
        "the upcasters cannot be used: " + problems.joined(separator: "; ")
    }
}
