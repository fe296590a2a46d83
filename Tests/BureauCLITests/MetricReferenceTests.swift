import Foundation
import TestSupport
import Testing

@testable import BureauCLI

/// README's metric reference names every metric Bureau serves, with the help text `/metrics`
/// gives it: the reference cannot drift from the code.
// Reads README and every source file: off the cooperative pool.
@Suite(.ownThreads)
struct MetricReferenceTests {
    @Test func readmesMetricReferenceListsEveryMetricWithItsHelpText() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        // The table's rows once, not README split again for every metric.
        let rows = try String(contentsOf: readme, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("| `") }
        #expect(!PrometheusFactory.help.isEmpty)
        for (name, help) in PrometheusFactory.help {
            let row = rows.first { $0.hasPrefix("| `\(name)` |") }
            #expect(row != nil, "README's metric reference lacks \(name)")
            #expect(
                row?.hasSuffix("| \(help) |") == true, "\(name): README says \(row ?? "nothing"), the code '\(help)'")
        }
    }

    /// A metric made without help text would reach Prometheus without it (`promtool check
    /// metrics` refuses that) and be missing from README's reference: every label given to a
    /// swift-metrics type in `Sources/` must have its help text.
    @Test func everyMetricMadeInTheSourcesHasItsHelpText() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        let made = try files.flatMap { file in
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            // The regular expression only on the lines that can match: over every source whole, it
            // took a second of a debug build's pool thread, and every test queued behind it waited.
            return text.split(separator: "\n").filter { $0.contains("(label: \"bureau_") }.flatMap { line in
                line.matches(of: /(?:Counter|Timer|Gauge|Recorder|Meter)\(label: "(bureau_[a-z0-9_]+)"/).map {
                    (String($0.1), file)
                }
            }
        }
        #expect(!made.isEmpty, "no metric found in \(sources.path)")
        for (name, file) in made {
            #expect(PrometheusFactory.help[name] != nil, "\(name), made in \(file), has no help text")
        }
    }

    @Test func everyMetricNameFollowsPrometheusConventions() {
        for name in PrometheusFactory.help.keys {
            #expect(name.hasPrefix("bureau_"), "\(name)")
            #expect(name.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" }, "\(name)")
            #expect(
                !name.contains("_ms") && !name.contains("milliseconds") && !name.contains("minutes"),
                "\(name): base units")
        }
    }
}
