import BureauSchemas
import Bus
import EventLog

/// One module's check: its reducer run and the outputs it computed that the log has not shown yet.
final class ModuleCheck {
    struct Expected {
        let output: OutgoingEvent
        let inputPosition: UInt64
    }

    let run: AnyReducerReplay
    var count: ReplayVerifier.ModuleCount
    /// In the order computed, which is the order a host publishes; `head` skips matched ones.
    private var expected: [Expected?] = []
    private var head = 0
    private var byID: [EventID: Int] = [:]

    /// The high half every id this module's host derives shares.
    private let derivedHigh: UInt64

    init(_ run: AnyReducerReplay) {
        self.run = run
        count = ReplayVerifier.ModuleCount(module: run.module)
        derivedHigh = EventID.derived(module: run.module, position: 0, index: 0).high
    }

    /// Whether the module's host published `event`: its module, and an id it derives or one of its output types.
    private func isRecordedOutput(_ event: StoredEvent) -> Bool {
        event.producerModule == run.module && (event.id.high == derivedHigh || run.outputTypes.contains(event.type))
    }

    func check(_ event: StoredEvent) -> ReplayDivergence? {
        if isRecordedOutput(event), let divergence = compare(event) { return divergence }
        switch run.apply(event) {
        case .notAnInput:
            break
        case .applied(let outputs):
            count.inputs += 1
            for output in outputs {
                expect(Expected(output: output, inputPosition: event.position))
            }
        case .malformed(let error, let reason):
            count.inputs += 1
            count.malformedInputs += 1
            if count.firstMalformed == nil {
                // An upcast failure names its position itself.
                count.firstMalformed = event.upcastFailure != nil ? reason : "position \(event.position): \(reason)"
            }
            expect(Expected(output: error, inputPosition: event.position))
        }
        count.unpublished = byID.count
        return nil
    }

    private func expect(_ expected: Expected) {
        byID[expected.output.id] = self.expected.count
        self.expected.append(expected)
    }

    /// Compares a recorded output of this module with the one re-computed under its id.
    private func compare(_ recorded: StoredEvent) -> ReplayDivergence? {
        guard let index = byID[recorded.id], let match = expected[index] else {
            return ReplayDivergence(
                kind: .notComputed, module: run.module, position: recorded.position, inputPosition: recorded.causation,
                recorded: recorded, computed: nil, differences: [])
        }
        // Outputs computed before this one and still not seen were skipped by the host: not recorded.
        while head < index {
            if let skipped = expected[head] {
                return ReplayDivergence(
                    kind: .notRecorded, module: run.module, position: recorded.position,
                    inputPosition: skipped.inputPosition, recorded: nil, computed: skipped.output, differences: [])
            }
            head += 1
        }
        let output = match.output
        // A recorded output its upcaster cannot read is compared with nothing: said as it is,
        // rather than as the fields of its stored bytes differing from today's shape.
        if let failure = recorded.upcastFailure {
            return ReplayDivergence(
                kind: .unreadable, module: run.module, position: recorded.position, inputPosition: match.inputPosition,
                recorded: recorded, computed: output, differences: [], reason: failure.description)
        }
        // The common case, checked without rendering either event as JSON.
        let same =
            recorded.type == output.type && recorded.causation == output.causation
            && recorded.correlation == output.correlation && recorded.producerModule == output.module
            && recorded.payload == output.payload
        let differences = same ? [] : EventJSON.differences(recorded: recorded, computed: output)
        guard differences.isEmpty else {
            return ReplayDivergence(
                kind: .different, module: run.module, position: recorded.position, inputPosition: match.inputPosition,
                recorded: recorded, computed: match.output, differences: differences)
        }
        expected[index] = nil
        byID[recorded.id] = nil
        head = index + 1
        count.outputsCompared += 1
        // Keep the list short on long logs: everything before `head` is matched.
        if head > 4096, head * 2 > expected.count {
            expected.removeFirst(head)
            byID = byID.mapValues { $0 - head }
            head = 0
        }
        count.unpublished = byID.count
        return nil
    }
}
