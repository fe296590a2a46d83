import Bus
import BusTesting
import Foundation
import TestSupport
import Testing
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// README's "Using it" block, run as written against the default deployment (`bureau up`, the
/// embedded servers): every command in it, in its order, from a shell with `bureau` on its path
/// and `BUREAU_DATA` set, must succeed. The two that follow for ever (`logs -f`, `log tail`)
/// must still be following when they are stopped after 3 s.
@Suite(.timeLimit(.minutes(3)))
struct ReadmeWalkthroughTests {
    @Test func theCommandsOfUsingItSucceedAsWrittenAgainstTheDefaultDeployment() async throws {
        let lines = try ReadmeBlock.shell(after: "From another terminal:\n")
        #expect(lines.count >= 8, "\(lines)")
        let directory = try TemporaryDirectory("readme")
        let data = directory.file("data")
        let up = try ChildProcess(
            BureauExecutable.path, ["up", "--no-tui", "--data", data], directory: directory.path, name: "up",
            readiness: true)
        defer { up.signal(SIGKILL) }
        try await up.waitUntilReady(timeout: .seconds(120))
        // Setup, not the walkthrough: the rates adapter has published, so the watchlist shows a quote.
        let observer = try ZeroMQBusClient(
            location: BusLocation(dataDirectory: data), options: .init(process: "readme-test"),
            logger: TestLogging.logger("readme-test"))
        defer { observer.close() }
        let rates = try await observer.collect(
            EventFilter(prefixes: ["bureau.rates.RatesPublished"]), count: 1, timeout: .seconds(60))
        try #require(!rates.isEmpty, "the rates adapter published no rates within 60 s")

        // In the test's directory: what the follow commands print goes there, not into the checkout.
        func script(from first: Int, named name: String) throws -> String {
            let text =
                ["set -euo pipefail", "cd \"$(dirname \"$0\")\""]
                + lines.enumerated().dropFirst(first).map { ReadmeBlock.scripted($1, index: $0) }
            let file = directory.file(name)
            try Files.write(file, text.joined(separator: "\n") + "\n")
            return file
        }
        let binDirectory = (BureauExecutable.path as NSString).deletingLastPathComponent
        let environment = [
            "PATH": binDirectory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "BUREAU_DATA": data,
        ]
        var result = try await Self.run(
            try script(from: 0, named: "using-it.sh"), in: directory.path, environment: environment)
        // The one way the block may fail as documented: the rates server moved on a day between
        // `show` and the reservation (STALE_QUOTE). Then the block is run again, once, from the
        // line that reads the quote shown: the lines before it are done (run again, the watchlist's
        // add would be refused as a duplicate).
        if result.code != 0, result.err.contains("STALE_QUOTE") || result.out.contains("STALE_QUOTE") {
            let quote = try #require(lines.firstIndex { $0.hasPrefix("rate=$(bureau show watchlist") })
            let again = try await Self.run(
                try script(from: quote, named: "using-it-again.sh"), in: directory.path, environment: environment)
            // What the whole block printed: the first run's lines, then the rest again.
            result = (again.code, result.out + again.out, result.err + again.err)
        }
        // On a failure, what the processes that answer a reservation logged.
        let logs = {
            ["reducers", "booking-adapter", "booking-server"].map { name in
                let file = BusLocation(dataDirectory: data).processLogDirectory + "/\(name).log"
                let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? "(no log at \(file))"
                return "== \(name)\n" + text.split(separator: "\n").suffix(40).joined(separator: "\n")
            }.joined(separator: "\n")
        }
        #expect(result.code == 0, "README's block failed:\n\(result.out)\n\(result.err)\n\(logs())")
        #expect(result.out.contains("EUR/USD"), "show watchlist showed the pair: \(result.out)")
        #expect(result.out.contains("ReservationConfirmed"), "the reservation's outcome: \(result.out)")
        // The last line, `bureau down`, stopped the deployment.
        #expect(await up.exitCode(within: .seconds(60)) == 0, "\(up.standardError)")
    }

    static func run(
        _ script: String, in directory: String, environment: [String: String]
    ) async throws -> (code: Int32?, out: String, err: String) {
        let child = try ChildProcess(
            "/bin/bash", [script], directory: directory, name: "using-it", environment: environment)
        let code = await child.exitCode(within: .seconds(120))
        if code == nil { child.signal(SIGKILL) }
        return (code, child.standardOutput, child.standardError)
    }
}
