import EventLog
import FaultInjection
import Foundation
import TestSupport
import Testing

/// The fault suite: every call the log makes to the file system, over a workload that crosses
/// segment rolls, fails in turn — with ENOSPC, EIO, a short write, a failed fdatasync, or a
/// crash — and after each, and again after a kill and a restart, the log must not lie
/// (RELIABILITY.md lists what is checked and what the last run found).
// Starts, kills and stops daemons (their log opened and synced, their threads joined) again
// and again: on threads of its own, off the cooperative pool.
@Suite(.ownThreads)
struct FaultSuiteTests {
    static let workload = FaultWorkload.make(seed: 13)

    @Test(arguments: FaultInjectingFileSystem.Fault.allCases)
    func everyCallFailingInTurnLeavesALogThatTellsNoLie(fault: FaultInjectingFileSystem.Fault) async throws {
        // BUREAU_FAULT_ONLY=enospc@17 runs one plan alone, to look at a failure closely.
        let only = ProcessInfo.processInfo.environment["BUREAU_FAULT_ONLY"].flatMap {
            try? FaultInjectingFileSystem.Plan(parsing: $0)
        }
        if let only, only.fault != fault {
            try Test.cancel("skipped: BUREAU_FAULT_ONLY runs \(only.fault)@\(only.call) alone")
        }
        // A run without faults counts the calls there are to fail, and shows the checks pass.
        let counter = try FaultRun(plan: nil)
        let (dryFailures, _) = try await counter.perform(Self.workload)
        #expect(dryFailures.isEmpty, "without faults: \(dryFailures)")
        let total = counter.count(of: fault)
        #expect(total > 20, "the workload makes \(total) calls that count for \(fault)")
        var injected = 0
        var restarts = 0
        var refused = 0
        var acknowledged = 0
        var rejected = 0
        let calls = (1...total).filter { only == nil || only?.call == $0 }
        for (call, failures, summary) in try await Self.runs(fault, calls: calls) {
            for failure in failures {
                Issue.record("\(fault)@\(call) (\(summary.injected ?? "nothing injected")): \(failure)")
            }
            if summary.injected != nil { injected += 1 }
            restarts += summary.restarts
            refused += summary.refusedBatches
            acknowledged += summary.acknowledged
            rejected += summary.rejected
        }
        #expect(injected == (only == nil ? total : 1), "every planned fault happened")
        print(
            "fault suite: \(fault): \(injected) injected over \(total) calls; \(restarts) daemon restarts, "
                + "\(refused) batches refused for a full disk, \(acknowledged) acknowledged events checked, "
                + "\(rejected) rejected events checked; acknowledged lost 0, rejected but committed 0, duplicates 0, "
                + "traps 0, fdatasync retried 0 (any of them would have failed the test)")
    }

    /// A run for each call, `width` at a time: a run mostly waits for its daemon (a sync, a
    /// restart, a reconnection), so that one at a time left the cores half idle. Each run has a
    /// directory and a daemon of its own. In call order.
    static func runs(
        _ fault: FaultInjectingFileSystem.Fault, calls: [Int], width: Int = 2
    ) async throws -> [(call: Int, failures: [String], summary: FaultRun.Summary)] {
        try await withThrowingTaskGroup(of: (call: Int, failures: [String], summary: FaultRun.Summary).self) { group in
            var pending = calls.makeIterator()
            func startNext() {
                guard let call = pending.next() else { return }
                group.addTask {
                    let (failures, summary) = try await FaultRun(plan: .init(fault, at: call)).perform(Self.workload)
                    return (call, failures, summary)
                }
            }
            for _ in 0..<width { startNext() }
            var done: [(call: Int, failures: [String], summary: FaultRun.Summary)] = []
            while let result = try await group.next() {
                done.append(result)
                startNext()
            }
            return done.sorted { $0.call < $1.call }
        }
    }
}
