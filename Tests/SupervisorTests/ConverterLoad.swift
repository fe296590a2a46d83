import BureauSchemas
import Bus
import EventLog
import Guards
import TestSupport
import ZeroMQBus

/// Load for the chaos tests: converter requests one after another, each sent again with its
/// id until the bus acknowledges it (at most ``attempts`` times, paced by ``retryPace``: then
/// the next request); and the audit of the log that follows.
final class ConverterLoad: Sendable {
    /// The answers a converter request gets.
    static let answers = [
        Bureau_Converter_AmountChanged.protoMessageName, Bureau_Converter_AmountRejected.protoMessageName,
    ]

    /// How many times one request is sent before the load moves on to the next (not counted
    /// as acknowledged): with the 3 s publish timeout, minutes, far past any outage a test makes.
    static let attempts = 100
    /// The pause before sending a request again: a refusal that comes at once (no bus to
    /// connect to) is not met with a loop that spins.
    static let retryPace = Backoff(
        initial: .milliseconds(20), multiplier: 2, maximum: .milliseconds(500), jitter: 0)

    private let stop = StopFlag()
    private let acknowledgedIDs = Locked<[EventID]>([])
    private let task: Task<Void, any Error>

    /// Starts publishing through a client `connect` makes (with a 3 s publish timeout).
    init(connect: @escaping @Sendable (ZeroMQBusClient.Options) throws -> ZeroMQBusClient) {
        let stop = self.stop
        let acknowledged = acknowledgedIDs
        task = Task {
            var options = ZeroMQBusClient.Options(process: "chaos-load")
            options.publishTimeout = .seconds(3)
            let client = try connect(options)
            defer { client.close() }
            var index = 0
            while !stop.isSet {
                index += 1
                let amount = index % 5 == 0 ? "-\(index)" : "\(index).50"
                let event = try OutgoingEvent(
                    Bureau_Converter_AmountSetRequested.with {
                        $0.value = amount
                        $0.currency = "EUR"
                    })
                for attempt in 1...ConverterLoad.attempts {
                    if stop.isSet { break }
                    if (try? await client.publish(event)) != nil {
                        acknowledged.withLock { $0.append(event.id) }
                        break
                    }
                    try? await Task.sleep(for: ConverterLoad.retryPace.nominalDelay(attempt: attempt))
                }
            }
        }
    }

    /// Stops publishing; returns the ids the bus acknowledged.
    func finish() async -> [EventID] {
        stop.set()
        _ = try? await task.value
        return acknowledgedIDs.value
    }

    /// What the log shows of the load: acknowledged requests missing or doubled, requests
    /// unanswered or answered more than once, and whether positions run 1, 2, … without a hole.
    struct Audit {
        var requests = 0
        var missing: [EventID] = []
        var doubled = 0
        var unanswered = 0
        var overAnswered = 0
        var contiguous = false

        init(events: [StoredEvent], acknowledged: [EventID]) {
            let requests = events.filter { $0.type == Bureau_Converter_AmountSetRequested.protoMessageName }
            let requestCounts = Dictionary(grouping: requests, by: \.id).mapValues(\.count)
            let answerCounts = Dictionary(
                grouping: events.filter { ConverterLoad.answers.contains($0.type) }, by: \.correlation
            ).mapValues(\.count)
            self.requests = requests.count
            missing = acknowledged.filter { requestCounts[$0] == nil }
            doubled = requestCounts.filter { $0.value > 1 }.count
            unanswered = requests.filter { answerCounts[$0.id] == nil }.count
            overAnswered = answerCounts.filter { $0.value > 1 }.count
            contiguous = events.enumerated().allSatisfy { $0.element.position == UInt64($0.offset + 1) }
        }
    }
}
