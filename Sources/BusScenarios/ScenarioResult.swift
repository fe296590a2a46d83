import BureauSchemas
import Bus
import Runtime
import SwiftProtobuf

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How one scenario went.
public struct ScenarioResult: Sendable {
    public let file: String
    public let name: String
    public let line: Int
    public let duration: Duration
    /// The report of what went wrong; nil when the scenario passed.
    public let failure: String?

    public init(file: String, name: String, line: Int, duration: Duration, failure: String?) {
        self.file = file
        self.name = name
        self.line = line
        self.duration = duration
        self.failure = failure
    }

    public var passed: Bool { failure == nil }

    /// `✓ file: name (0.2 s)`, or `✗ …` followed by the report, indented.
    public var summary: String {
        let head = "\(passed ? "✓" : "✗") \(file): \(name) (\(duration.secondsText(tenths: true)) s)"
        guard let failure else { return head }
        return head + "\n"
            + failure.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }
            .joined(separator: "\n")
    }
}
