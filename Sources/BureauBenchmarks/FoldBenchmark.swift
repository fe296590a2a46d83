import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Runtime
import WatchlistFeature

/// The per-event costs of the read side, each alone, from memory, on one thread: what replay,
/// a projection rebuild and a reducer host spend on an event besides reading the log.
struct FoldBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fold",
        abstract: "Nanoseconds per event of each step of the read side, from memory, on one thread.",
        discussion: HelpText.prose(
            """
            Builds --events envelopes in memory as the replay benchmark's log holds them (rates,
            then add and remove requests in turn, each followed by the watchlist reducer's answer),
            then times each step over all of them, --rounds times, the steps taking turns, and
            prints the best round of each: decoding the envelopes (what raw read + decode does
            besides reading), the reducer's `advance` (replay), its `step` with outputs (a host),
            the watchlist projection (rebuild), and replay's whole fold (reducer and projection).
            No log, no thread hand-over: the figures are the work itself, so that a change to
            one step can be measured on a noisy machine.

            Example: swift run -c release bureau-bench fold --events 200000 --rounds 7
            """)
    )

    @Option(help: "(default: 200000)", transform: BoundedNumber.integers(in: 2...10_000_000)) var events = 200_000
    @Option(help: "(default: 7)", transform: BoundedNumber.integers(in: 1...100)) var rounds = 7

    func run() async throws {
        let envelopes = try Self.envelopes(count: events)
        let decoded = try envelopes.map { try StoredEvent(envelopeBytes: $0) }
        let reducer = WatchlistReducer()
        let projection = WatchlistProjection()
        let filter = projection.filter

        var steps: [(name: String, run: () throws -> Int)] = []
        steps.append(
            (
                "envelope decode (StoredEvent)",
                {
                    var sum = 0
                    var names = TypeNameCache()
                    for envelope in envelopes {
                        sum &+= Int(try StoredEvent(envelopeBytes: envelope, names: &names).position)
                    }
                    return sum
                }
            ))
        steps.append(
            (
                "reducer advance (replay)",
                {
                    var replay = ReducerReplay(reducer)
                    var applied = 0
                    for event in decoded where replay.advance(event) == .applied { applied += 1 }
                    return applied
                }
            ))
        steps.append(
            (
                "reducer step with outputs (host)",
                {
                    var state = reducer.initialState
                    var outputs = 0
                    for event in decoded { outputs += reducer.step(event, state: &state).outputs.count }
                    return outputs
                }
            ))
        steps.append(
            (
                "projection (rebuild)",
                {
                    var value = projection.initialValue
                    for event in decoded where filter.matches(event.type) { try projection.apply(event, to: &value) }
                    return value.pairs.count
                }
            ))
        steps.append(
            (
                "replay fold (reducer and projection)",
                {
                    let replay = LogReplay(reducers: [reducer], projections: [AnyProjection(projection)])
                    for event in decoded { replay.apply(event) }
                    return replay.eventCount
                }
            ))

        var best = [Double](repeating: .infinity, count: steps.count)
        for _ in 0..<rounds {
            for (index, step) in steps.enumerated() {
                let started = ContinuousClock.now
                _ = try step.run()
                let nanos = Double((ContinuousClock.now - started).inNanoseconds) / Double(envelopes.count)
                best[index] = min(best[index], nanos)
            }
        }
        print("# fold benchmark: \(formatted(Double(envelopes.count))) events, best of \(rounds) rounds")
        print("")
        print("| step | ns per event |")
        print("|---|---|")
        for (index, step) in steps.enumerated() {
            print("| \(step.name) | \(String(format: "%.0f", best[index])) |")
        }
    }

    /// The envelopes of the replay benchmark's log (``WatchlistSession``), as stored.
    static func envelopes(count: Int) throws -> [Data] {
        var envelopes: [Data] = []
        envelopes.reserveCapacity(count)
        try WatchlistSession.events(count: count) { envelopes.append(try $0.envelope().serializedData()) }
        return envelopes
    }
}
