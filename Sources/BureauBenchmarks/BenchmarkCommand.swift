import ArgumentParser
import Foundation

/// `bureau-bench`: the project's benchmarks. Each compares Bureau with a baseline measured in
/// the same run, because these machines are noisy; BENCHMARKS.md records the figures.
@main
struct BenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bureau-bench",
        abstract: "Bureau's benchmarks, each beside a baseline measured in the same run.",
        discussion: "Build in release mode: swift run -c release bureau-bench <benchmark>",
        subcommands: [
            BusBenchmark.self, HostsBenchmark.self, LogOpenBenchmark.self, ReducersBenchmark.self,
            ReplayBenchmark.self, FoldBenchmark.self, RendererBenchmarkCommand.self, RelayCommand.self,
            StoreBenchmark.self,
        ]
    )
}

/// Ends the process with a message if a benchmark runs longer than `limit`: a lost event
/// would otherwise leave it waiting forever.
func startWatchdog(_ limit: Duration = .seconds(600)) {
    Task.detached {
        try? await Task.sleep(for: limit)
        FileHandle.standardError.write(Data("bureau-bench: gave up after \(limit)\n".utf8))
        exit(2)
    }
}

/// Formats a rate with thousands separators, e.g. 312,400.
func formatted(_ value: Double) -> String {
    let integer = Int(value.rounded())
    let digits = String(integer)
    var result = ""
    for (index, character) in digits.reversed().enumerated() {
        if index > 0 && index % 3 == 0 { result.append(",") }
        result.append(character)
    }
    return String(result.reversed())
}

/// A scratch directory under /tmp (short, for ipc paths), removed afterwards.
func withScratchDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = "/tmp/bench-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}
