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
        #expect(await log.line { $0.level == .error } != nil)
        try FileManager.default.createDirectory(atPath: location.dataDirectory, withIntermediateDirectories: true)
        // Then the file is written (said once it is), and the failure was said once, at error level
        #expect(await log.line { $0.message == "Prometheus' targets are written again" } != nil)
        #expect(FileManager.default.fileExists(atPath: PrometheusTargets.path(location)))
        let errors = log.lines.filter { $0.level == .error }
        #expect(errors.count == 1, "\(errors.map(\.message))")
        #expect(errors.first?.message.hasPrefix("cannot write Prometheus' targets") == true)
    }
}
