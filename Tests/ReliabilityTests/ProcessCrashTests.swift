import Bus
import EventLog
import Foundation
import Guards
import Synchronization
import TestSupport
import Testing
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// The fault suite's crash, for real: the daemon (`bureau-faults`, `bureau bus` built for the
/// tests with a fault plan) with `BUREAU_FAULT=crash@N` sends itself
/// SIGKILL at its Nth write, sync or rename, over a workload that rolls 1 MiB segments. The
/// daemon is started again (as `bureau up` would) and the producer's retries go on; then it is
/// killed once more at the end, started again, and every promise is checked.
// Its counting run starts and stops a daemon in the process (the log opened and synced, its
// threads joined): on threads of its own, off the cooperative pool.
@Suite(.ownThreads, .timeLimit(.minutes(5)))
struct ProcessCrashTests {
    static let workload = FaultWorkload.make(count: 14, size: 8, bytes: 40_000, seed: 7)

    /// Restarts the daemon whenever it dies, until told to stop.
    ///
    /// `stop()` ends a generation: a daemon kept before it is never restarted, even when its
    /// exit is noticed after the test has started the next one (otherwise that late restart
    /// was a second daemon nobody stopped).
    final class Keeper: Sendable {
        let bus: BusProcess
        private let state = Mutex<(generation: Int, restarts: Int, crashes: [String])>((0, 0, []))

        init(bus: BusProcess) { self.bus = bus }

        func keep(_ child: ChildProcess) {
            keep(child, generation: state.withLock { $0.generation })
        }

        private func keep(_ child: ChildProcess, generation: Int) {
            Task {
                let ended = await child.exitStatus()
                let restart = state.withLock { state -> Bool in
                    if ended.signal == SIGKILL { state.crashes.append(child.standardError) }
                    guard state.generation == generation else { return false }
                    state.restarts += 1
                    return true
                }
                guard restart, let next = try? await bus.start(["--segment-mib", "1"], waitUntilReady: false) else {
                    return
                }
                // Stopped while this one was starting: it is not kept, so it is ended here.
                guard state.withLock({ $0.generation }) == generation else {
                    next.signal(SIGKILL)
                    _ = await next.exitStatus()
                    return
                }
                keep(next, generation: generation)
            }
        }

        func stop() { state.withLock { $0.generation += 1 } }
        var restarts: Int { state.withLock { $0.restarts } }
        var crashes: [String] { state.withLock { $0.crashes } }
    }

    @Test func killingTheDaemonProcessAtItsNthWriteLosesAndDoublesNothing() async throws {
        // The same workload in-process counts the calls there are (the daemon makes the same ones).
        let counter = try FaultRun(plan: nil, segmentSize: 1 << 20)
        let (dry, _) = try await counter.perform(Self.workload)
        #expect(dry.isEmpty, "\(dry)")
        let total = counter.count(of: .crash)
        #expect(total > 40, "\(total) calls")
        var checked = 0
        for call in stride(from: 1, through: total, by: max(1, total / 14)) {
            let directory = try TemporaryDirectory("crash")
            let bus = BusProcess(directory: directory.path, faults: true)
            let keeper = Keeper(bus: bus)
            let first = try await bus.start(
                ["--segment-mib", "1"], environment: [FaultInjectionVariable.name: "crash@\(call)"],
                waitUntilReady: false)
            keeper.keep(first)
            var options = ZeroMQBusClient.Options(process: "crash-producer")
            options.firstRetry = .milliseconds(20)
            options.maxRetry = .milliseconds(200)
            options.publishTimeout = .seconds(60)
            let client = try ZeroMQBusClient(
                location: bus.location, options: options, logger: TestLogging.logger("crash"))
            var answers: [EventID: [FaultRun.Answer]] = [:]
            var envelopes: [EventID: Data] = [:]
            var failures: [String] = []
            for (number, batch) in Self.workload.batches.enumerated() {
                for event in batch { envelopes[event.id] = event.envelope }
                _ = try await Self.workload.send(
                    batch, number: number, with: client, answers: &answers, failures: &failures)
            }
            // The daemon died at the Nth call, by SIGKILL, and said what it was about to do.
            let crashes = keeper.crashes
            #expect(crashes.count == 1, "crash@\(call): \(crashes.count) crashes")
            #expect(crashes.first?.contains("injecting crash at call \(call)") == true)

            // kill -9 once more, start again, and check.
            keeper.stop()
            await bus.stop(SIGKILL)
            keeper.keep(try await bus.start(["--segment-mib", "1"]))
            var summary = FaultRun.Summary()
            failures += try await LogPromises.check(
                location: bus.location, answers: answers, envelopes: envelopes, client: client, summary: &summary)
            for failure in failures { Issue.record("crash@\(call): \(failure)") }
            client.close()
            keeper.stop()
            await bus.stop()
            checked += 1
        }
        print(
            "process crashes: \(checked) daemons killed by SIGKILL at sampled calls of \(total); each restarted, "
                + "killed again and checked: acknowledged lost 0, rejected but committed 0, duplicates 0")
    }
}

/// The variable `bureau-faults` reads its fault plan from (`bureau` reads none).
enum FaultInjectionVariable {
    static let name = "BUREAU_FAULT"
}
