import Foundation
import Guards
import Synchronization

/// What the simulation does to one call, drawn by ``SimulatedFaults``.
enum SimulatedFault: Equatable {
    case none
    /// Answered 503 before anything happens.
    case unavailable
    /// Held back for the stall, before the work (a request slow to arrive) or after it (an
    /// answer slow to come).
    case stall(beforeWork: Bool)
    /// Done, and answered with a body over a client's size limit.
    case oversize
    /// The connection is closed without an answer once the request is read, before the work or
    /// after it.
    case cut(beforeWork: Bool)
}

/// Draws the fault of each call from the seed, the call's idempotency key and how many calls
/// came with that key before: the same seed gives a call the same fault however the calls
/// interleave. Requests without a key (reads) share one count.
final class SimulatedFaults: Sendable {
    let configuration: BookingServer.Configuration
    private let seed: UInt64
    private let calls = Mutex<[String: UInt64]>([:])

    init(_ configuration: BookingServer.Configuration) {
        self.configuration = configuration
        seed = configuration.seed ?? UInt64.random(in: .min ... .max)
    }

    /// The fault of the next call under `key`. Calls without an idempotency key are reads:
    /// they may only be unavailable.
    func draw(key: String?) -> SimulatedFault {
        // A key of the API is never empty, so the empty name cannot collide with one.
        let name = key ?? ""
        let count = calls.withLock { calls in
            defer { calls[name, default: 0] += 1 }
            return calls[name, default: 0]
        }
        var generator = Xoshiro256(seed: seed ^ FNV1a.hash("\(name)#\(count)"))
        let share = Double(generator.next() >> 11) / Double(1 << 53)
        let beforeWork = generator.next() & 1 == 0
        var threshold = configuration.failureRate
        if share < threshold { return .unavailable }
        guard key != nil else { return .none }
        threshold += configuration.stallRate
        if share < threshold { return .stall(beforeWork: beforeWork) }
        threshold += configuration.oversizeRate
        if share < threshold { return .oversize }
        threshold += configuration.cutRate
        if share < threshold { return .cut(beforeWork: beforeWork) }
        return .none
    }
}
