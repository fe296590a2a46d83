import Foundation
import Testing

@testable import BureauCLI

/// README's metric reference names every metric Bureau serves, with the help text `/metrics`
/// gives it: the reference cannot drift from the code.
struct MetricReferenceTests {
    @Test func readmesMetricReferenceListsEveryMetricWithItsHelpText() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        #expect(!PrometheusFactory.help.isEmpty)
        for (name, help) in PrometheusFactory.help {
            let row = text.split(separator: "\n").first { $0.hasPrefix("| `\(name)` |") }
            #expect(row != nil, "README's metric reference lacks \(name)")
            #expect(row?.hasSuffix("| \(help) |") == true, "\(name): README says \(row ?? "nothing"), the code '\(help)'")
        }
    }

    @Test func everyMetricNameFollowsPrometheusConventions() {
        for name in PrometheusFactory.help.keys {
            #expect(name.hasPrefix("bureau_"), "\(name)")
            #expect(name.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" }, "\(name)")
            #expect(!name.contains("_ms") && !name.contains("milliseconds") && !name.contains("minutes"), "\(name): base units")
        }
    }
}
