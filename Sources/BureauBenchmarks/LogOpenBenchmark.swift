import ArgumentParser
import EventLog
import Foundation
import Guards
import Logging

struct LogOpenBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log-open",
        abstract: "Time to open (and recover) a log with few segments and with many.",
        discussion: "Start-up checks the newest segment whole and no other, so the time should not grow with the log."
    )

    @Option(help: "(default: 1000)", transform: BoundedNumber.integers(in: 1...1_000_000)) var recordsPerSegment = 1000
    @Option(help: "(default: 10)", transform: BoundedNumber.integers(in: 1...100_000)) var few = 10
    @Option(help: "(default: 1000)", transform: BoundedNumber.integers(in: 1...100_000)) var many = 1000

    func run() async throws {
        startWatchdog()
        let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        var rows: [(Int, Double, Int64)] = []
        for segments in [few, many] {
            let result = try await withScratchDirectory { directory in
                var options = FileEventLog.Options()
                options.durability = .never
                options.segmentSize = Int64(recordsPerSegment * (32 + 100)) + 32
                options.deduplicationWindow = 1000
                do {
                    let log = try FileEventLog(directory: directory, options: options, logger: quiet)
                    var position: UInt64 = 0
                    for _ in 0..<segments {
                        let records = (0..<recordsPerSegment).map { _ in
                            position += 1
                            return LogRecord(position: position, id: .random(), body: Data(count: 100))
                        }
                        try log.append(records)
                    }
                    try log.close()
                }
                var best = Double.infinity
                var scanned: Int64 = 0
                for _ in 0..<5 {
                    let started = ContinuousClock.now
                    let log = try FileEventLog(directory: directory, options: options, logger: quiet)
                    best = min(best, (ContinuousClock.now - started).inSeconds)
                    scanned = log.recovery.scannedBytes
                    try log.close()
                }
                return (segments, best, scanned)
            }
            rows.append(result)
        }
        print("| segments | open time (best of 5) | newest segment bytes checked |")
        print("|---|---|---|")
        for (segments, time, scanned) in rows {
            print(
                "| \(segments) | \(Duration.seconds(saturating: time).millisecondsText(decimals: 2)) ms | \(scanned) |")
        }
        print("| ratio \(many)/\(few) | \(String(format: "%.2f", rows[1].1 / rows[0].1)) | |")
    }
}
