import BureauSchemas
import Bus
import EventLog
import Runtime
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Events matched to patterns, as many as can be: a maximum bipartite matching (augmenting
/// paths), so that the order events arrive in never decides whether they match.
struct Assignment {
    let matched: [Int: StoredEvent]
    let unexpected: [StoredEvent]
    let missing: [Int]

    init(patterns: [EventPattern], events: [StoredEvent]) {
        let fits = events.map { event in patterns.indices.filter { patterns[$0].matches(event) } }
        var eventOf = [Int?](repeating: nil, count: patterns.count)
        func augment(_ event: Int, _ visited: inout [Bool]) -> Bool {
            for pattern in fits[event] where !visited[pattern] {
                visited[pattern] = true
                if let holder = eventOf[pattern], !augment(holder, &visited) { continue }
                eventOf[pattern] = event
                return true
            }
            return false
        }
        for event in events.indices {
            var visited = [Bool](repeating: false, count: patterns.count)
            _ = augment(event, &visited)
        }
        var matched: [Int: StoredEvent] = [:]
        for (pattern, event) in eventOf.enumerated() { if let event { matched[pattern] = events[event] } }
        let used = Set(eventOf.compactMap { $0 })
        self.matched = matched
        unexpected = events.indices.filter { !used.contains($0) }.map { events[$0] }
        missing = patterns.indices.filter { eventOf[$0] == nil }
    }
}
