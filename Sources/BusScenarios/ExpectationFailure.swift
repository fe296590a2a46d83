import Bus
import Runtime

/// Why an `expect` failed: what was awaited and not seen, and what was seen and not expected.
///
/// Its description is the report a person reads: each missing event with the closest event
/// received and the fields that differ, each unexpected event with its payload.
public struct ExpectationFailure: Error, Sendable, CustomStringConvertible {
    public let stimulus: Stimulus
    /// Patterns no event matched, and for each the received event that came closest.
    public let missing: [(pattern: EventPattern, closest: (event: StoredEvent, mismatches: [FieldDifference])?)]
    /// Events in the stimulus's chain that matched no pattern (exhaustive mode only).
    public let unexpected: [StoredEvent]
    /// How long the events were awaited: the timeout, or less when an unexpected event and then
    /// a quiet period ended the wait early.
    public let waited: Duration

    public var description: String {
        var lines = ["after \(stimulus):"]
        for (pattern, closest) in missing {
            lines.append(
                "  missing    \(pattern.type) \(pattern.payload), not seen within \(waited.secondsText(tenths: true)) s"
            )
            if let (event, mismatches) = closest {
                lines.append("    closest: the event at position \(event.position):")
                lines += mismatches.map { "      \($0.expectationText)" }
            }
        }
        for event in unexpected {
            lines.append(
                "  unexpected \(event.type) at position \(event.position): "
                    + "\(EventJSON.payload(type: event.type, bytes: event.payload))")
        }
        return lines.joined(separator: "\n")
    }
}
