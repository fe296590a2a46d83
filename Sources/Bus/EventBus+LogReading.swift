import Guards
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension EventBus {
    /// Reads the committed events from `from` through `to` through the bus (its catch-up reads)
    /// instead of the log's files, for tools run where the files are not: in order, each with the
    /// envelope bytes the log holds for it. `body` returns false to stop.
    ///
    /// Reads up to `to`, or up to the head when this is called if `to` is nil or past it; returns
    /// that head. A read that cannot finish never hangs and never ends quietly: it throws
    /// ``BusError/readStalled(after:seconds:)`` when nothing comes for `idleTimeout`, and
    /// ``BusError/unexpectedAnswer(_:)`` if an event comes out of order.
    @discardableResult
    public func readLog(
        from: UInt64 = 1, to: UInt64? = nil, idleTimeout: Duration = .seconds(10),
        _ body: (StoredEvent, Data) throws -> Bool
    ) async throws -> UInt64 {
        let head = try await ping(timeout: idleTimeout).head
        let last = min(to ?? head, head)
        let first = max(from, 1)
        guard first <= last else { return head }
        let subscription = subscribe(.all, after: first - 1, bufferCapacity: 4096)
        let watch = ReadWatch()
        // Cancels the subscription when a whole idleTimeout passes without an item, so that the
        // loop below ends instead of waiting for ever.
        let watchdog = Task {
            var seen = UInt64.max
            while !Task.isCancelled {
                try? await Task.sleep(for: idleTimeout)
                let now = watch.items.load(ordering: .relaxed)
                if now == seen, !Task.isCancelled {
                    watch.stalled.store(true, ordering: .relaxed)
                    subscription.cancel()
                    return
                }
                seen = now
            }
        }
        defer {
            watchdog.cancel()
            subscription.cancel()
        }
        var next = first
        var iterator = subscription.makeAsyncIterator()
        while let (item, envelope) = try await iterator.nextWithEnvelope() {
            watch.items.add(1, ordering: .relaxed)
            guard case .event(let event) = item, let envelope else { continue }
            guard event.position == next else {
                throw BusError.unexpectedAnswer("position \(event.position) where \(next) was next")
            }
            if try !body(event, envelope) || next == last { return head }
            next += 1
        }
        if watch.stalled.load(ordering: .relaxed) {
            throw BusError.readStalled(after: next - 1, seconds: idleTimeout.inSeconds)
        }
        throw BusError.closed
    }
}

/// What ``EventBus/readLog(from:to:idleTimeout:_:)``'s watchdog looks at.
private final class ReadWatch: Sendable {
    let items = Atomic<UInt64>(0)
    let stalled = Atomic<Bool>(false)
}
