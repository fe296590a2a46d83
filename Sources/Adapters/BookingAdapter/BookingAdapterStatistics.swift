import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Logging
import Runtime
import ServiceLifecycle
import Synchronization

/// What the booking adapter has done, for tests to await.
public final class BookingAdapterStatistics: Sendable {
    private struct State {
        var owed: Int?
        var completed: [String] = []
        var retries = 0
        var unknown = 0
        var resolveRetries = 0
    }

    private let state = Mutex(State())
    private let completedMark = Watermark()
    private let caughtUpMark = Watermark()

    public init() {}

    public var completed: [String] { state.withLock { $0.completed } }
    /// Calls sent again after the service did nothing.
    public var retries: Int { state.withLock { $0.retries } }
    public var owedAtStart: Int? { state.withLock { $0.owed } }
    /// Calls whose outcome was unknown, each then resolved (or being resolved).
    public var unknownOutcomes: Int { state.withLock { $0.unknown } }
    /// Resolves asked again because the service could not answer one.
    public var resolveRetries: Int { state.withLock { $0.resolveRetries } }

    func caughtUp(owed: Int) {
        state.withLock { $0.owed = owed }
        caughtUpMark.add(1)
    }
    func retried() { state.withLock { $0.retries += 1 } }
    func outcomeUnknown() { state.withLock { $0.unknown += 1 } }
    func resolveRetried() { state.withLock { $0.resolveRetries += 1 } }

    func completed(_ type: String) {
        state.withLock { $0.completed.append(type) }
        completedMark.add(1)
    }

    /// Returns once the adapter has read the log up to the head and knows what it owes.
    public func waitUntilCaughtUp() async {
        await caughtUpMark.wait(until: 1)
    }

    /// Returns once `count` outcomes have been published since start.
    public func waitUntilCompleted(_ count: Int) async {
        await completedMark.wait(until: UInt64(max(count, 0)))
    }
}
