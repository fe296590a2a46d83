import Bus
import Synchronization

/// Publishes a host's outputs in order without making the host wait for each acknowledgement.
///
/// The host enqueues; one publisher task takes everything queued, publishes it in one
/// request and waits for the acknowledgement, again and again. ``drain()`` waits until
/// everything enqueued is acknowledged (before a snapshot). Enqueueing waits while too much
/// is unacknowledged, so a host cannot run away from a slow bus.
final class Outbox: Sendable {
    private struct State {
        var queued: [OutgoingEvent] = []
        var inFlight = 0
        var publisher: CheckedContinuation<Void, Never>?
        var drainers: [CheckedContinuation<Void, Never>] = []
        var spaceWaiters: [CheckedContinuation<Void, Never>] = []
        var failure: (any Error)?
    }

    private let state = Mutex(State())
    private let client: any EventBus
    private let limit: Int
    private let onAcknowledged: @Sendable (Int) -> Void

    init(client: any EventBus, limit: Int = 20_000, onAcknowledged: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.client = client
        self.limit = limit
        self.onAcknowledged = onAcknowledged
    }

    /// Queues events for publishing, in order; waits while the outbox is full.
    func enqueue(_ events: [OutgoingEvent]) async throws {
        guard !events.isEmpty else { return }
        while true {
            let (ready, publisher, failure) = state.withLock {
                state -> (Bool, CheckedContinuation<Void, Never>?, (any Error)?) in
                if let failure = state.failure { return (false, nil, failure) }
                guard state.queued.count + state.inFlight < limit else { return (false, nil, nil) }
                state.queued += events
                defer { state.publisher = nil }
                return (true, state.publisher, nil)
            }
            if let failure { throw failure }
            if ready {
                publisher?.resume()
                return
            }
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.queued.count + state.inFlight < limit || state.failure != nil { return true }
                    state.spaceWaiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Returns when everything enqueued so far is acknowledged; throws what the publisher failed with.
    func drain() async throws {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if (state.queued.isEmpty && state.inFlight == 0) || state.failure != nil { return true }
                state.drainers.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    /// The publisher loop; runs until cancelled or a publish fails.
    func run() async throws {
        while !Task.isCancelled {
            let batch = await takeQueued()
            guard !batch.isEmpty else { continue }
            do {
                let outcomes = try await client.publish(batch)
                if let rejected = outcomes.first(where: { $0.position == nil }) {
                    throw RuntimeError.outputRejected("\(rejected)")
                }
            } catch {
                fail(error)
                throw error
            }
            onAcknowledged(batch.count)
            let (drainers, waiters) = state.withLock { state in
                state.inFlight = 0
                let idle = state.queued.isEmpty
                let drainers = idle ? state.drainers : []
                if idle { state.drainers = [] }
                let waiters = state.spaceWaiters
                state.spaceWaiters = []
                return (drainers, waiters)
            }
            for drainer in drainers { drainer.resume() }
            for waiter in waiters { waiter.resume() }
        }
    }

    private func takeQueued() async -> [OutgoingEvent] {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if !state.queued.isEmpty || Task.isCancelled { return true }
                    state.publisher = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let publisher = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.publisher = nil }
                return state.publisher
            }
            publisher?.resume()
        }
        return state.withLock { state in
            let batch = state.queued
            state.queued = []
            state.inFlight = batch.count
            return batch
        }
    }

    private func fail(_ error: any Error) {
        let (drainers, waiters) = state.withLock { state in
            state.failure = error
            defer {
                state.drainers = []
                state.spaceWaiters = []
            }
            return (state.drainers, state.spaceWaiters)
        }
        for drainer in drainers { drainer.resume() }
        for waiter in waiters { waiter.resume() }
    }
}
