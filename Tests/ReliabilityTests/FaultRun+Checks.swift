import BureauSchemas
import Bus
import EventLog
import Foundation
import LogTools
import Runtime
import TestSupport

extension FaultRun {
    /// Runs the workload, kills the daemon, starts it again and checks every promise the log
    /// makes; returns what was broken (nothing, if the log told no lie) and what happened.
    func perform(_ workload: FaultWorkload) async throws -> (failures: [String], summary: Summary) {
        var failures: [String] = []
        var summary = Summary()
        start(plan: plan)
        defer { stop() }
        let client = try client()
        defer { client.close() }
        do {
            try await run(workload, client: client, failures: &failures, summary: &summary)
        } catch {
            failures.append("the workload stopped: \(error)")
            failures += startFailures.map { "a daemon on a sound disk did not start: \($0)" }
            summary.injected = injected
            return (failures, summary)
        }
        return (failures, summary)
    }

    private func run(
        _ workload: FaultWorkload, client: BusClient, failures: inout [String], summary: inout Summary
    ) async throws {
        var answers: [EventID: [Answer]] = [:]
        var envelopes: [EventID: Data] = [:]
        for (number, batch) in workload.batches.enumerated() {
            for event in batch { envelopes[event.id] = event.envelope }
            for attempt in 1...2 {
                let ack = try await client.publish(envelopes: batch.map(\.envelope))
                guard ack.results.count == batch.count else {
                    failures.append("batch \(number): \(ack.results.count) results for \(batch.count) events")
                    break
                }
                var refused = false
                for (event, result) in zip(batch, ack.results) {
                    let answer: Answer =
                        switch result.status {
                        case .committed: .committed(result.position)
                        case .duplicate: .duplicate(result.position)
                        default: .rejected(result.reason)
                        }
                    answers[event.id, default: []].append(answer)
                    if event.invalid {
                        if answer.position != nil {
                            failures.append("batch \(number): an invalid envelope got \(answer)")
                        }
                    } else if case .rejected(let reason) = answer {
                        if reason.contains("disk is full") {
                            refused = true
                        } else {
                            failures.append("batch \(number): \(event.id) was rejected: \(reason)")
                        }
                    }
                }
                guard refused else { break }
                summary.refusedBatches += 1
                if attempt == 2 {
                    failures.append("batch \(number) was still refused after the space was freed")
                } else if (plan?.call ?? 0) % 2 == 0 {
                    // The operator frees space; the producer sends the same batch again.
                    freeSpace()
                } else {
                    // Or the daemon dies before anyone frees space, and starts again on a disk
                    // with room: what it had refused must not be in the log.
                    kill()
                    start(plan: nil)
                }
            }
        }
        summary.injected = injected
        // Checked as the fault left things, then again after a kill -9 and a restart.
        failures += try await check(answers: answers, envelopes: envelopes, client: client, summary: &summary)
            .map { "after the fault: \($0)" }
        kill()
        start(plan: nil)
        summary.acknowledged = 0
        summary.rejected = 0
        failures += try await check(answers: answers, envelopes: envelopes, client: client, summary: &summary)
            .map { "after a kill and a restart: \($0)" }
        summary.restarts = restarts
        failures += startFailures.map { "a daemon on a sound disk did not start: \($0)" }
        if retriedSyncs > 0 { failures.append("fdatasync was retried \(retriedSyncs) time(s) after it failed") }
    }

    /// Every promise the log makes, checked against the answers the producer got.
    private func check(
        answers: [EventID: [Answer]], envelopes: [EventID: Data], client: BusClient, summary: inout Summary
    ) async throws -> [String] {
        var failures: [String] = []

        // What the log holds, read from its files as `log show` does.
        var events: [StoredEvent] = []
        var records: [LogRecord] = []
        do {
            try LogFiles.scan(directory: location.logDirectory) { event, record in
                events.append(event)
                records.append(record)
                return true
            }
        } catch {
            failures.append("the log cannot be read: \(error)")
            return failures
        }
        if events.map(\.position) != Array(0..<UInt64(events.count)).map({ $0 + 1 }) {
            failures.append("positions are not 1…\(events.count): \(events.map(\.position))")
        }
        var positions: [EventID: [UInt64]] = [:]
        for event in events { positions[event.id, default: []].append(event.position) }
        for (id, found) in positions where found.count > 1 {
            failures.append("\(id) is in the log \(found.count) times: \(found)")
        }
        for id in positions.keys where answers[id] == nil { failures.append("\(id) is in the log but was never sent") }
        for (id, list) in answers {
            // REJECTED means not stored: the next acknowledgement of the same id is a commit,
            // never a duplicate of something the bus said it had not stored.
            for (earlier, later) in zip(list, list.dropFirst()) {
                if case .rejected = earlier, case .duplicate = later {
                    failures.append("\(id) was rejected, then sent again and found a duplicate: \(list)")
                }
            }
            let acknowledged = Set(list.compactMap(\.position))
            if acknowledged.count > 1 { failures.append("\(id) was acknowledged at several positions: \(list)") }
            if let position = acknowledged.first {
                summary.acknowledged += 1
                if positions[id] != [position] {
                    failures.append(
                        "\(id) was acknowledged at \(position) but the log has it at \(positions[id] ?? [])")
                }
            } else {
                summary.rejected += 1
                if let found = positions[id] {
                    failures.append("\(id) was rejected (\(list)) but is in the log at \(found)")
                }
            }
        }
        let verified = try LogVerifier.verify(directory: location.logDirectory)
        if !verified.ok { failures.append("log verify: \(verified.problems)") }

        // Every acknowledged id is recognised when it is sent again.
        let acknowledged = answers.compactMap { id, list in list.compactMap(\.position).first.map { (id, $0) } }
        for chunk in stride(from: 0, to: acknowledged.count, by: 64).map({
            acknowledged[$0..<min($0 + 64, acknowledged.count)]
        }) {
            let ack = try await client.publish(envelopes: chunk.compactMap { envelopes[$0.0] })
            for ((id, position), result) in zip(chunk, ack.results)
            where result.status != .duplicate || result.position != position {
                failures.append("\(id), acknowledged at \(position), sent again: \(result.status) \(result.position)")
            }
        }

        // Catch-up reads see what the files hold.
        let subscription = client.subscribe(after: 0)
        var delivered: [StoredEvent] = []
        for try await item in subscription {
            if case .event(let event) = item { delivered.append(event) }
            if case .caughtUp(let head) = item, head >= UInt64(events.count) { break }
        }
        subscription.cancel()
        if delivered != events {
            failures.append("catch-up delivered \(delivered.count) events that differ from the files")
        }

        // An export reads back as the same records.
        for (event, record) in zip(events, records) {
            let line = LogExchange.line(event, envelope: record.body)
            if (try? LogExchange.record(from: Array(line.utf8), expecting: record.position)) != record {
                failures.append("the export of position \(record.position) does not read back as its record")
                break
            }
        }

        // Replay folds the same events.
        let replay = LogReplay(reducers: [], projections: [AnyProjection(FaultTally())])
        try LogFiles.forEach(directory: location.logDirectory) { replay.apply($0) }
        let live = AnyProjection(FaultTally()).fold()
        for event in delivered { live.apply(event) }
        if try replay.snapshot().projection("fault-tally")?.value != JSONValue(parsing: try live.json()) {
            failures.append("replay's fold differs from the catch-up's")
        }
        return failures
    }
}

/// The ids of the workload's events, in log order: a projection for replay to fold.
struct FaultTally: Projection {
    var name: String { "fault-tally" }
    var inputTypes: [String] { [FaultWorkload.type] }
    var initialValue: [String] { [] }
    func apply(_ event: StoredEvent, to value: inout [String]) { value.append("\(event.position) \(event.id)") }
    func render(_ value: [String]) -> String { value.joined(separator: "\n") }
}
