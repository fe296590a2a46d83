import BureauSchemas
import Bus
import EventLog
import Foundation
import LogTools
import Runtime
import TestSupport
import ZeroMQBus

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
            failures.append("the workload stopped: \(error) (\(status))")
            failures += startFailures.map { "a daemon on a sound disk did not start: \($0)" }
            summary.injected = injected
            return (failures, summary)
        }
        return (failures, summary)
    }

    private func run(
        _ workload: FaultWorkload, client: ZeroMQBusClient, failures: inout [String], summary: inout Summary
    ) async throws {
        var answers: [EventID: [Answer]] = [:]
        var envelopes: [EventID: Data] = [:]
        for (number, batch) in workload.batches.enumerated() {
            for event in batch { envelopes[event.id] = event.envelope }
            for attempt in 1...2 {
                let refused = try await workload.send(
                    batch, number: number, with: client, answers: &answers, failures: &failures)
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
        failures += try await LogPromises.check(
            location: location, answers: answers, envelopes: envelopes, client: client, summary: &summary
        ).map { "after the fault: \($0)" }
        kill()
        start(plan: nil)
        summary.acknowledged = 0
        summary.rejected = 0
        failures += try await LogPromises.check(
            location: location, answers: answers, envelopes: envelopes, client: client, summary: &summary
        ).map { "after a kill and a restart: \($0)" }
        summary.restarts = restarts
        failures += startFailures.map { "a daemon on a sound disk did not start: \($0)" }
        if retriedSyncs > 0 { failures.append("fdatasync was retried \(retriedSyncs) time(s) after it failed") }
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
