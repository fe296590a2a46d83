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
        for call in 1...total where only == nil || only?.call == call {
            let run = try FaultRun(plan: .init(fault, at: call))
            let (failures, summary) = try await run.perform(Self.workload)
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
}
