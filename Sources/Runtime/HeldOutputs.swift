import Bus
import EventLog

/// The outputs a reducer host computed while catching up, held back until it knows which the
/// log holds already (published before a crash) and which it must publish.
///
/// Outputs come in input order, and their ids are derived from the input's position and the
/// output's index (``EventID/derived(module:position:index:)``), so the ids are in order too:
/// an output seen in the log is found by binary search on its id, with no table to fill for
/// outputs that are never seen (nearly all of them, a million inputs behind).
struct HeldOutputs {
    private var outputs: [OutgoingEvent] = []
    /// Which of ``outputs`` the log turned out to hold.
    private var published: [Bool] = []
    private var publishedCount = 0

    /// How many were held.
    var count: Int { outputs.count }

    /// Holds `events`, the outputs of an input after those of every input held before.
    mutating func hold(_ events: [OutgoingEvent]) {
        outputs += events
        published += repeatElement(false, count: events.count)
    }

    /// Marks the output with `id` as already in the log; false if none held has it.
    @discardableResult
    mutating func markPublished(_ id: EventID) -> Bool {
        let key = Self.order(id)
        var low = 0
        var high = outputs.count
        while low < high {
            let middle = (low + high) / 2
            if Self.order(outputs[middle].id) < key { low = middle + 1 } else { high = middle }
        }
        guard low < outputs.count, outputs[low].id == id else { return false }
        if !published[low] { publishedCount += 1 }
        published[low] = true
        return true
    }

    /// The outputs the log does not hold, in order.
    var missing: [OutgoingEvent] {
        // Usually none was published (a host rebuilding from nothing): no copy of a million.
        guard publishedCount > 0 else { return outputs }
        return zip(outputs, published).compactMap { $1 ? nil : $0 }
    }

    /// A derived id's input position and output index, in that order (the id's low half
    /// without its variant bits).
    private static func order(_ id: EventID) -> UInt64 {
        id.low & ((1 << 62) - 1)
    }
}
