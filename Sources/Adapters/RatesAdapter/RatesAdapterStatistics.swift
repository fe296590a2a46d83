import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Logging
import Runtime
import ServiceLifecycle
import Synchronization

/// What the rates adapter has done, for tests to await.
public final class RatesAdapterStatistics: Sendable {
    private let state = Mutex<(polls: Int, failures: Int, published: [String], isReady: Bool)>((0, 0, [], false))
    public init() {}
    public var published: [String] { state.withLock { $0.published } }
    public var polls: Int { state.withLock { $0.polls } }
    func ready() { state.withLock { $0.isReady = true } }
    func polled(ok: Bool) {
        state.withLock {
            $0.polls += 1
            if !ok { $0.failures += 1 }
        }
    }
    func published(_ asOf: String) { state.withLock { $0.published.append(asOf) } }
}
