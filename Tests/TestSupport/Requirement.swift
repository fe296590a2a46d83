import Guards
import TestServers
import Testing

/// Runs a test only where what it needs is here (a PostgreSQL server, network namespaces).
/// Elsewhere each test case ends at once as skipped and Swift Testing shows why (not installed,
/// `initdb` failed, not root), which a condition trait's comment, fixed before the reason is
/// known, could not carry. The reason is found on a thread of its own, never on the
/// cooperative pool: finding it may start a server or a command and wait for it.
public struct Requirement: TestTrait, SuiteTrait, TestScoping {
    /// What is missing, said before the reason: "no PostgreSQL server for the tests".
    public let missing: String
    /// Why it is missing here; nil when it is not.
    public let unavailable: @Sendable () async -> String?

    public init(missing: String, unavailable: @escaping @Sendable () async -> String?) {
        self.missing = missing
        self.unavailable = unavailable
    }

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        if testCase != nil, let reason = await unavailable() {
            let comment = Requirement.comment(missing: missing, reason: reason)
            try Requirement.skip(comment, sourceLocation: test.sourceLocation)
        }
        try await function()
    }

    /// Ends the current test case as skipped, saying why. Swift Testing 6.3's console calls a
    /// cancelled test case passed, without the reason, so the reason is also recorded as a known
    /// issue, which it shows (at `sourceLocation`) without failing the run.
    static func skip(_ comment: Comment, sourceLocation: SourceLocation) throws -> Never {
        withKnownIssue("the test is skipped") {
            Issue.record(comment, sourceLocation: sourceLocation)
        }
        try Test.cancel(comment, sourceLocation: sourceLocation)
    }

    /// What a test skipped for want of `missing` says.
    static func comment(missing: String, reason: String) -> Comment {
        Comment(rawValue: "skipped: \(missing): \(reason)")
    }

    /// A synchronous `unavailable`, asked on a thread of its own.
    static func offThePool(_ name: String, _ unavailable: @escaping @Sendable () -> String?) async -> String? {
        do {
            return try await OwnThread.run(name: name, unavailable)
        } catch {
            return "\(error)"
        }
    }
}

extension Trait where Self == Requirement {
    /// Skips each test, saying why, where the shared PostgreSQL server (``TestPostgres``) is not up.
    public static var requiresPostgreSQL: Self {
        Requirement(missing: TestPostgres.missing) { await TestPostgres.unavailableOffThePool() }
    }

    /// Skips each test, saying why, where network namespaces cannot be made (``NetworkHosts``).
    public static var requiresNetworkHosts: Self {
        Requirement(missing: "no network namespaces for the tests") {
            await Requirement.offThePool("test-netns") { NetworkHosts.unavailable }
        }
    }
}
