import MetricsTestKit
import Testing

@testable import Supervisor

/// What the supervisor serves of each process through swift-metrics: up or not, its restarts
/// (each counted once, however often the rows are recorded) and its uptime.
struct SupervisorMetricsTests {
    static let dimensions = [("process", "worker")]

    @Test func eachRestartIsCountedOnceAndUpAndUptimeFollowTheProcess() throws {
        let metrics = TestMetrics()
        let recorder = SupervisorMetrics(factory: metrics)
        // Given a worker that has run for 5 s
        var process = ProcessLifecycleTests.running()
        recorder.record([Supervisor.Row(process, now: time(5))])
        let restarts = try metrics.expectCounter("bureau_process_restarts_total", Self.dimensions)
        let up = try metrics.expectGauge("bureau_process_up", Self.dimensions)
        let uptime = try metrics.expectGauge("bureau_process_uptime_seconds", Self.dimensions)
        #expect(restarts.totalValue == 0)
        #expect(up.lastValue == 1)
        #expect(uptime.lastValue == 5)

        // When it fails twice and is started again each time, and the rows are recorded twice
        _ = ProcessLifecycleTests.fail(&process, times: 2)
        #expect(process.restarts == 2)
        recorder.record([Supervisor.Row(process, now: time(60))])
        recorder.record([Supervisor.Row(process, now: time(61))])
        // Then two restarts are counted, not four
        #expect(restarts.totalValue == 2)
        #expect(up.lastValue == 1, "starting again counts as up")

        // When it fails until it is left crash-looping
        _ = ProcessLifecycleTests.fail(&process, times: RestartPolicy().maximumRestarts)
        recorder.record([Supervisor.Row(process, now: time(600))])
        // Then it is down, its uptime 0, and every restart it had is counted
        #expect(Supervisor.Row(process, now: time(600)).state == .crashLooping)
        #expect(up.lastValue == 0)
        #expect(uptime.lastValue == 0)
        #expect(restarts.totalValue == Int64(process.restarts))
    }
}
