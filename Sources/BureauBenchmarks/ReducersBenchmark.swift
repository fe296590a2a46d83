import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import LogTools
import Logging
import Runtime
import ServiceLifecycle
import WatchlistFeature
import ZeroMQBus

struct ReducersBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reducers",
        abstract: "Reducer host throughput, restart beside a big log, and projection rebuild vs raw read + decode.",
        discussion: HelpText.prose(
            """
            Publishes --events watchlist requests (add and remove EUR/USD in turn, one answer each),
            then: starts a host with no snapshot and times it until every answer is acknowledged
            (inputs/s), --runs times, each on a new log; stops the last (it snapshots) and times a
            restart until it has caught up; folds the watchlist projection over the whole log from
            the files (events/s) beside reading and decoding the same log without folding, each
            --runs times, taking turns. The figures are the best runs: a shared machine's speed
            changes from one second to the next.
            """)
    )

    @Option(help: "(default: 1000000)", transform: BoundedNumber.integers(in: 2...100_000_000)) var events = 1_000_000
    @Option(
        help:
            "How many times to measure the host, and the rebuild and its baseline, taking turns; each figure is the best run. (default: 5)",
        transform: BoundedNumber.integers(in: 1...20))
    var runs = 5
    @Option(
        help:
            "Record metrics into swift-prometheus and report the host's progress (on, as `bureau run` does), or neither (off)."
    )
    var metrics = MetricsChoice.on
    @Flag(help: "Measure the host's throughput only (--runs times): no restart, no rebuild.")
    var hostOnly = false

    func run() async throws {
        startWatchdog(.seconds(1800))
        metrics.bootstrap()
        if hostOnly {
            var hosts: [HostRun] = []
            for _ in 0..<runs {
                hosts.append(try await withScratchDirectory { try await hostRun($0, restart: false) })
            }
            let best = hosts.map(\.throughput).max() ?? 0
            print(
                "host: \(formatted(best)) inputs/s (best of \(runs): \(hosts.map { formatted($0.throughput) }.joined(separator: " / ")))"
            )
            return
        }
        // The host's runs each on a log of their own (a host that ran leaves its answers in it);
        // the last one's log is then restarted beside and rebuilt from.
        var hosts: [HostRun] = []
        for _ in 1..<runs {
            hosts.append(try await withScratchDirectory { try await hostRun($0, restart: false) })
        }
        try await withScratchDirectory { directory in
            let location = BusLocation(dataDirectory: directory + "/data")
            let last = try await hostRun(directory, restart: true)
            hosts.append(last)
            let host = hosts.max { $0.throughput < $1.throughput } ?? last
            let restart = last.restart ?? .zero
            let head = last.head
            let startedFrom = last.startedFrom

            // Projection rebuild vs raw read + decode, from the files, same log: each --runs
            // times, taking turns; the ratios are best over best.
            let projection = WatchlistProjection()
            let filter = projection.filter
            var value = projection.initialValue
            let runs = try inTurns(
                runs,
                [
                    { try timeRead(location) { _ in } },
                    { try timeScan(location) { _ in } },
                    {
                        value = projection.initialValue
                        return try timeScan(location) { event in
                            if filter.matches(event.type) { try projection.apply(event, to: &value) }
                        }
                    },
                    {
                        var inlineValue = projection.initialValue
                        return try timeRead(location) { event in
                            if filter.matches(event.type) { try projection.apply(event, to: &inlineValue) }
                        }
                    },
                ])
            let (raw, ahead, fold, inline) = (runs[0], runs[1], runs[2], runs[3])
            let best = self.runs == 1 ? "" : ", best of \(self.runs)"
            print("")
            print("| measure | value |")
            print("|---|---|")
            let restartMs = restart.millisecondsText(decimals: 1)
            let inputs = formatted(Double(events))
            print(
                "| host throughput (no snapshot, \(inputs) inputs → answers acknowledged)\(best) "
                    + "| \(formatted(host.throughput)) inputs/s |")
            if self.runs > 1 {
                print(
                    "| host: every run | \(hosts.map { formatted($0.throughput) }.joined(separator: " / ")) inputs/s |")
            }
            print(
                "| host restart beside a \(formatted(Double(head)))-event log | \(restartMs) ms to catch up, "
                    + "from snapshot position \(formatted(Double(startedFrom))) |"
            )
            print(
                "| raw read + decode of the log (\(formatted(Double(raw.count))) events)\(best) | \(formatted(raw.best)) events/s |"
            )
            print(
                "| read + decode ahead, on a thread of its own (the tools' reading)\(best) | \(formatted(ahead.best)) events/s |"
            )
            print(
                "| projection rebuild (watchlist, \(formatted(Double(fold.count))) events)\(best) | \(formatted(fold.best)) events/s |"
            )
            print(
                "| projection rebuild reading inline (as before the read-ahead)\(best) | \(formatted(inline.best)) events/s |"
            )
            if self.runs > 1 {
                print("| raw read + decode: every run | \(raw.every) events/s |")
                print("| projection rebuild: every run | \(fold.every) events/s |")
            }
            print("| rebuild inline / raw read + decode | \(String(format: "%.2f", inline.best / raw.best)) |")
            print("| rebuild / raw read + decode | \(String(format: "%.2f", fold.best / raw.best)) |")
            print("")
            print(
                "CPU per event, every thread, least of any run: raw read + decode \(raw.leastCPUText); "
                    + "read ahead, nothing done \(ahead.leastCPUText); "
                    + "rebuild read ahead \(fold.leastCPUText); "
                    + "rebuild reading inline \(inline.leastCPUText)")
            print("final watchlist: \(value.pairs.map(\.description))")
        }
    }

    /// One host's run: its throughput and phases, and, after a restart, how long the restart took.
    struct HostRun {
        var throughput: Double
        var restart: Duration?
        /// The log's head when the restart began, and the snapshot position it started from.
        var head: UInt64 = 0
        var startedFrom: UInt64 = 0
    }

    /// Publishes the inputs to a new daemon on `directory` and times a host with no snapshot
    /// until every answer is acknowledged; with `restart`, then times a restart from its snapshot.
    func hostRun(_ directory: String, restart: Bool) async throws -> HostRun {
        let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let location = BusLocation(dataDirectory: directory + "/data")
        let daemon = try BusDaemon(configuration: .init(location: location), logger: quiet).start()
        defer { daemon.stop() }
        var options = ZeroMQBusClient.Options(process: "bench")
        options.publishTimeout = .seconds(120)
        let client = try ZeroMQBusClient(location: location, options: options, logger: quiet)
        defer { client.close() }

        // The inputs.
        let rates = Bureau_Rates_RatesPublished(asOf: "2026-10-30", rates: ["USD": "1.1172"])
        _ = try await client.publish(try OutgoingEvent(rates))
        let add = try PairAddRequested(base: "EUR", quote: "USD").serializedData()
        let remove = try PairRemoveRequested(base: "EUR", quote: "USD").serializedData()
        var sent = 0
        while sent < events {
            let count = min(4096, events - sent)
            let batch = (0..<count).map { index in
                (sent + index) % 2 == 0
                    ? OutgoingEvent(type: PairAddRequested.protoMessageName, payload: add)
                    : OutgoingEvent(type: PairRemoveRequested.protoMessageName, payload: remove)
            }
            _ = try await client.publish(batch)
            sent += count
        }
        let inputsHead = try await client.ping().head
        print("# reducers benchmark: \(formatted(Double(events))) inputs in the log (head \(inputsHead))")

        // Host throughput: no snapshot, every input in the log, until every answer is acknowledged.
        let snapshots = FileSnapshotStore(directory: location.snapshotDirectory)
        let first = HostStatistics()
        var started = ContinuousClock.now
        let cpuAtStart = processCPUSeconds()
        let (group, task) = try startHost(client: client, snapshots: snapshots, statistics: first, logger: quiet)
        // Two phases: reading and applying every input (answers held back until the host
        // knows which are in the log already), then publishing the answers.
        await first.waitUntilSeen(inputsHead)
        let inputsRead = ContinuousClock.now - started
        let cpuInputsRead = processCPUSeconds()
        await first.waitUntilCaughtUp()
        let caughtUp = ContinuousClock.now - started
        await first.waitUntilAcknowledged(events)
        let throughput = Double(events) / (ContinuousClock.now - started).inSeconds
        // CPU per input, every thread (the daemon's too): steadier than the time on a shared machine.
        func perInput(_ seconds: Double) -> String {
            Duration.seconds(saturating: seconds / Double(events)).microsecondsText(decimals: 2) + " µs"
        }
        print(
            "host: every input read and applied after \(inputsRead.secondsText(decimals: 2)) s (\(perInput(cpuInputsRead - cpuAtStart)) of CPU "
                + "per input), caught up after \(caughtUp.secondsText(decimals: 2)) s, all answers acknowledged "
                + "after \((ContinuousClock.now - started).secondsText(decimals: 2)) s (\(perInput(processCPUSeconds() - cpuInputsRead)) of CPU per input)"
        )
        // A host that was keeping up when it stopped has seen its own answers too.
        await first.waitUntilSeen(try await client.ping().head)
        await group.triggerGracefulShutdown()
        try await task.value
        guard restart else { return HostRun(throughput: throughput) }

        // Restart beside the now two-million-event log: from the snapshot.
        let head = try await client.ping().head
        let second = HostStatistics()
        started = ContinuousClock.now
        let (group2, task2) = try startHost(client: client, snapshots: snapshots, statistics: second, logger: quiet)
        await second.waitUntilCaughtUp()
        let restarted = ContinuousClock.now - started
        await group2.triggerGracefulShutdown()
        try await task2.value
        return HostRun(throughput: throughput, restart: restarted, head: head, startedFrom: second.startedFrom)
    }

    func startHost(
        client: ZeroMQBusClient, snapshots: any SnapshotStore, statistics: HostStatistics, logger: Logger
    ) throws -> (ServiceGroup, Task<Void, any Error>) {
        var options = ReducerHostOptions()
        options.snapshotEvery = 100_000
        // With metrics on, as `bureau run` runs a host: its counts, reported once a second.
        let progress = metrics == .on ? ProgressReporter(client: client, logger: logger) : nil
        let host = ReducerHost(
            reducer: WatchlistReducer(), client: client, snapshots: snapshots, options: options, logger: logger,
            statistics: statistics, metrics: progress?.consumer("watchlist"))
        let services: [any Service] = [host] + (progress.map { [$0] } ?? [])
        let group = ServiceGroup(services: services, logger: logger)
        return (group, Task { try await group.run() })
    }

    /// The same through the tools' reading of the log (`bureau replay`'s, `log show`'s): the
    /// records read and decoded a few chunks ahead on a thread of their own.
    func timeScan(_ location: BusLocation, _ body: (StoredEvent) throws -> Void) throws -> (Double, Int) {
        let started = ContinuousClock.now
        var count = 0
        try LogFiles.forEach(directory: location.logDirectory) { event in
            try body(event)
            count += 1
        }
        return (Double(count) / (ContinuousClock.now - started).inSeconds, count)
    }

    /// Reads and decodes every event of the log inline, handing each to `body`: the baseline,
    /// events/s and how many.
    func timeRead(_ location: BusLocation, _ body: (StoredEvent) throws -> Void) throws -> (Double, Int) {
        let started = ContinuousClock.now
        let cursor = try LogCursor(directory: location.logDirectory, after: 0)
        var count = 0
        var names = TypeNameCache()
        while let record = try cursor.next() {
            try body(try StoredEvent(envelopeBytes: record.body, names: &names))
            count += 1
        }
        return (Double(count) / (ContinuousClock.now - started).inSeconds, count)
    }
}
