import Bus
import Foundation
import TestSupport
import Testing

@testable import BureauCLI

/// `bureau up` keeps Prometheus' targets file: a write that fails is said once and tried again
/// every turn, not only when the processes change.
struct PrometheusTargetsTests {
    @Test func aTargetsFileThatCannotBeWrittenIsSaidOnceAndWrittenOnceItCan() async throws {
        // Given a data directory that does not exist (yet), and the targets kept every 10 ms
        let directory = try TemporaryDirectory("targets")
        let location = BusLocation(dataDirectory: directory.file("data"))
        let log = CapturedLog()
        let targets = PrometheusTargets(location: location, logger: log.logger("up"), interval: .milliseconds(10))
        let running = Task { try await targets.run() }
        defer { running.cancel() }
        // When the first writes fail, and then the directory is made (no process changed since)
        #expect(await Self.within(.seconds(10)) { log.lines.contains { $0.level == .error } })
        try FileManager.default.createDirectory(atPath: location.dataDirectory, withIntermediateDirectories: true)
        // Then the file is written, and the failure was said once, at error level
        #expect(
            await Self.within(.seconds(10)) { FileManager.default.fileExists(atPath: PrometheusTargets.path(location)) }
        )
        let errors = log.lines.filter { $0.level == .error }
        #expect(errors.count == 1, "\(errors.map(\.message))")
        #expect(errors.first?.message.hasPrefix("cannot write Prometheus' targets") == true)
        #expect(
            await Self.within(.seconds(10)) {
                log.lines.contains { $0.message == "Prometheus' targets are written again" }
            })
    }

    /// Whether `condition` holds within `limit`, looked at every 10 ms: a file and a log line
    /// give nothing to await.
    private static func within(_ limit: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}
