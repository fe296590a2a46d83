import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Logging
import Runtime
import ServiceLifecycle
import Synchronization

/// Polls a rates source and publishes `RatesPublished` when the fixing changes.
///
/// The next poll starts one interval after the last one began, or when the last one ends if it
/// took longer. A poll waits for the source's answer up to ``Configuration/timeout`` and no
/// longer: a source that has not answered by then (it hangs, or trickles its body) is
/// cancelled and reported, once per timeout. A poll is never cancelled by the next one — a
/// newer poll would ask the same question, and superseding a slow source at every interval
/// would hide it for ever. A failure publishes `RatesFetchFailed` (reason, attempt, next
/// retry) and `ErrorRaised`, and the next poll waits for exponential backoff with jitter,
/// capped; so does a fixing the bus refuses, which is not taken as published. A fixing's event
/// id is derived from the source and the as-of date, so a restart never publishes it twice.
public final class RatesAdapterService: Service {
    public struct Configuration: Sendable {
        public var interval: Duration = .seconds(1)
        /// How long a poll waits for the source's answer before it is cancelled and reported.
        public var timeout: Duration = .seconds(5)
        public var backoff = Backoff(initial: .milliseconds(500), multiplier: 2, maximum: .seconds(30), jitter: 0.2)

        /// Called once the adapter has found where it left off and works live.
        public var onReady: @Sendable () -> Void = {}

        public init() {}
    }

    public static let module = "rates-adapter"

    private let source: any RatesSource
    private let client: any EventBus
    private let snapshots: any SnapshotStore
    private let configuration: Configuration
    private let logger: Logger
    private let statistics: RatesAdapterStatistics?
    private let metrics: RatesAdapterMetrics

    struct State: Codable, Sendable, Equatable {
        var asOf: String
        var rates: [String]
    }

    public init(
        source: any RatesSource, client: any EventBus, snapshots: any SnapshotStore, configuration: Configuration,
        logger: Logger, statistics: RatesAdapterStatistics? = nil, metrics: RatesAdapterMetrics = RatesAdapterMetrics()
    ) {
        self.metrics = metrics
        self.source = source
        self.client = client
        self.snapshots = snapshots
        self.configuration = configuration
        self.logger = logger
        self.statistics = statistics
    }

    public func run() async throws {
        // Graceful shutdown cancels everything, the search for the last fixing included (it
        // waits for the bus, which may never come): a poll in flight is abandoned, nothing is owed.
        try await cancelWhenGracefulShutdown {
            let last: State?
            do {
                last = try await self.lastPublished()
            } catch  where Task.isCancelled {
                return
            }
            guard !Task.isCancelled else { return }
            self.statistics?.ready()
            self.configuration.onReady()
            await self.poll(after: last)
        }
    }

    private func poll(after published: State?) async {
        var last = published
        var failures = 0
        // A published fixing whose snapshot is not saved yet (the store was away): saved at the next poll.
        var snapshotOwed = false
        while !Task.isCancelled {
            let began = ContinuousClock.now
            var delay = configuration.interval
            guard let answer = await Self.fetch(from: source, within: configuration.timeout) else { return }
            metrics.fetch.record(duration: .now - began)
            switch answer {
            case .success(let document):
                do {
                    let fixing = try ECBRatesParser.latest(document)
                    let state = State(asOf: fixing.asOf, rates: fixing.rates.map { "\($0.currency)=\($0.rate)" })
                    var refusal: String?
                    if state != last {
                        if case .rejected(let reason) = try await publish(fixing) {
                            refusal = reason
                        } else {
                            last = state
                            snapshotOwed = true
                        }
                    }
                    if snapshotOwed, let last { snapshotOwed = !saveSnapshot(last) }
                    if let refusal {
                        // Not published: reported, and tried again after a backoff.
                        failures += 1
                        delay = configuration.backoff.delay(attempt: failures)
                        await reportFailure(
                            "the bus refused RatesPublished of \(fixing.asOf): \(refusal)", status: 200,
                            failure: .publishRefused, attempt: failures, next: delay)
                    } else {
                        failures = 0
                        statistics?.polled(ok: true)
                    }
                } catch let error as ECBParseError {
                    failures += 1
                    delay = configuration.backoff.delay(attempt: failures)
                    await reportFailure(
                        error.description, status: 200, failure: .malformedDocument, attempt: failures, next: delay)
                } catch {
                    // Publishing failed (the bus is away): try again at the next poll, same id.
                    logger.error("could not publish rates", metadata: ["rates.error": "\(error)"])
                }
            case .failure(let error):
                failures += 1
                delay = configuration.backoff.delay(attempt: failures)
                await reportFailure(
                    error.description, status: error.httpStatus, failure: RatesFailure(error), attempt: failures,
                    next: delay)
            }
            let wake = began + max(delay, .zero)
            if ContinuousClock.now < wake { try? await Task.sleep(until: wake) }
        }
    }

    /// The source's answer, or ``FetchError/timedOut(milliseconds:)`` once `timeout` has passed
    /// without one (the fetch is then cancelled); nil only when the caller is cancelled.
    static func fetch(from source: any RatesSource, within timeout: Duration) async -> Result<Data, FetchError>? {
        let answer = await Timeout.result(within: timeout) { () async -> Result<Data, FetchError> in
            do throws(FetchError) { return .success(try await source.fetch()) } catch { return .failure(error) }
        }
        if Task.isCancelled { return nil }
        return answer ?? .failure(.timedOut(milliseconds: Int(timeout.inMilliseconds)))
    }

    /// Publishes the fixing; returns what the bus answered (a refusal is not an error here).
    private func publish(_ fixing: ECBFixing) async throws -> PublishOutcome {
        var event = Bureau_Rates_RatesPublished()
        event.asOf = fixing.asOf
        event.base = "EUR"
        event.source = source.name
        event.rates = fixing.rates.map { currency, rate in
            var item = Bureau_Rates_Rate()
            item.currency = currency
            item.rate = rate
            return item
        }
        let outgoing = try Emitted(event).outgoing(
            id: Self.fixingID(source: source.name, asOf: fixing.asOf), module: Self.module)
        let outcome = try await client.publish(outgoing)
        if case .rejected(let reason) = outcome {
            logger.error(
                "the bus refused the rates", metadata: ["rates.as_of": "\(fixing.asOf)", "rates.reason": "\(reason)"])
            return outcome
        }
        logger.info(
            "published rates",
            metadata: ["rates.as_of": "\(fixing.asOf)", "rates.position": "\(outcome.position ?? 0)"])
        statistics?.published(fixing.asOf)
        metrics.published.increment()
        return outcome
    }

    /// Counts and reports a failed poll; `failure` is nil for a fetch abandoned as the adapter stops.
    private func reportFailure(
        _ reason: String, status: Int, failure: RatesFailure?, attempt: Int, next: Duration
    ) async {
        if let failure { metrics.failed(failure) }
        let milliseconds = UInt64(max(0, next.inMilliseconds))
        logger.warning(
            "could not read the rates",
            metadata: [
                "rates.reason": "\(reason)", "rates.attempt": "\(attempt)", "rates.retry_in_ms": "\(milliseconds)",
            ])
        statistics?.polled(ok: false)
        // Bounded, so that the report of a problem is never itself refused for its size.
        let sourceName = EventText.bounded(source.name)
        let reason = EventText.bounded(reason)
        var failed = Bureau_Rates_RatesFetchFailed()
        failed.source = sourceName
        failed.reason = reason
        failed.attempt = UInt32(clamping: attempt)
        failed.nextRetryMs = milliseconds
        failed.httpStatus = Int32(clamping: status)
        let raised = ErrorReporter(module: Self.module, process: client.process)
            .event(code: failure?.code ?? .fetchFailed, message: "\(sourceName): \(reason)")
        do {
            let outcomes = try await client.publish([
                try Emitted(failed).outgoing(id: .random(), module: Self.module), raised,
            ])
            for case .rejected(let refusal) in outcomes {
                logger.error("the bus refused the failure report", metadata: ["rates.reason": "\(refusal)"])
            }
        } catch {
            logger.error("could not publish the failure", metadata: ["rates.error": "\(error)"])
        }
    }

    /// Saves the fixing published last; a failure is logged, not fatal: the snapshot only
    /// shortens the search at the next start, which reads the log after it anyway.
    private func saveSnapshot(_ state: State) -> Bool {
        do {
            try snapshots.save(Snapshot(module: Self.module, stateVersion: 1, position: 0, state: state))
            return true
        } catch {
            logger.error(
                "could not save the snapshot; trying again at the next poll",
                metadata: ["rates.as_of": "\(state.asOf)", "rates.error": "\(error)"])
            return false
        }
    }

    /// The fixing published last for this source: from the snapshot, then from the log after it
    /// (a crash can come between publishing and snapshotting).
    private func lastPublished() async throws -> State? {
        var last = snapshots.load(
            State.self, module: Self.module, stateVersion: 1,
            rejected: { [logger] in
                logger.warning(
                    "ignoring the snapshot; searching the whole log for the last fixing published",
                    metadata: ["rates.snapshot_problem": "\($0)"])
            })?.state
        let subscription = client.subscribe(.types([Bureau_Rates_RatesPublished.protoMessageName]))
        for try await item in subscription {
            switch item {
            case .event(let event):
                guard event.producerModule == Self.module else { continue }
                let published: Bureau_Rates_RatesPublished?
                do {
                    published = try event.payload(as: Bureau_Rates_RatesPublished.self)
                } catch {
                    // The one before it stands as the last published; at worst a fixing is
                    // published again, under the same id.
                    logger.error(
                        "a published fixing cannot be read",
                        metadata: ["rates.position": "\(event.position)", "rates.error": "\(error)"])
                    continue
                }
                guard let published, published.source == source.name else { continue }
                last = State(asOf: published.asOf, rates: published.rates.map { "\($0.currency)=\($0.rate)" })
            case .caughtUp:
                subscription.cancel()
            case .connection:
                continue
            }
        }
        return last
    }

    /// The id of the fixing `asOf` from `source`: the same on every run.
    public static func fixingID(source: String, asOf: String) -> EventID {
        EventID.derived(module: "rates:" + source, position: UInt64(asOf.filter(\.isNumber)) ?? 0, index: 0)
    }
}
