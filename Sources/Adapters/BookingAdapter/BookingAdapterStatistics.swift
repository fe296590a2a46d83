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
    private let state = Mutex<(owed: Int?, completed: [String], retries: Int)>((nil, [], 0))
    private let completedMark = Watermark()

    public init() {}

    public var completed: [String] { state.withLock { $0.completed } }
    public var retries: Int { state.withLock { $0.retries } }
    public var owedAtStart: Int? { state.withLock { $0.owed } }

    func caughtUp(owed: Int) { state.withLock { $0.owed = owed } }
    func retried() { state.withLock { $0.retries += 1 } }

    func completed(_ type: String) {
        state.withLock { $0.completed.append(type) }
        completedMark.add(1)
    }

    /// Returns once `count` outcomes have been published since start.
    public func waitUntilCompleted(_ count: Int) async {
        await completedMark.wait(until: UInt64(max(count, 0)))
    }
}
