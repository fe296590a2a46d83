import Foundation
import HTTPCalls
import Synchronization

/// Sends ended spans to an OpenTelemetry collector over OTLP/HTTP (protobuf), in batches: when
/// ``OTLPConfiguration/maxExportBatchSize`` spans wait, or ``OTLPConfiguration/scheduleDelay``
/// after the last export, and what is left when ``run()`` is ended by ``shutdown()``.
///
/// Never holds up a span's end: a span that finds the queue full is dropped and counted. A batch
/// the collector does not take is dropped, said through `report`; the next is tried all the same.
public final class OTLPSpanExporter: Sendable {
    /// What became of one export.
    public enum Outcome: Sendable, Equatable {
        case exported(spans: Int)
        case failed(spans: Int, reason: String)
    }

    public let configuration: OTLPConfiguration
    private let queue = Mutex<[FinishedSpan]>([])
    private let droppedSpans = Atomic<Int>(0)
    private let wakeUp: AsyncStream<Void>.Continuation
    private let wakeUps: AsyncStream<Void>
    private let report: @Sendable (Outcome) -> Void

    /// `report` hears of every export, from the task that runs ``run()``.
    public init(configuration: OTLPConfiguration, report: @escaping @Sendable (Outcome) -> Void = { _ in }) {
        self.configuration = configuration
        self.report = report
        (wakeUps, wakeUp) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Spans dropped so far because the queue was full.
    public var dropped: Int { droppedSpans.load(ordering: .relaxed) }

    func add(_ span: FinishedSpan) {
        let batchReady: Bool? = queue.withLock { queue in
            guard queue.count < configuration.maxQueueSize else { return nil }
            queue.append(span)
            return queue.count == configuration.maxExportBatchSize
        }
        switch batchReady {
        case nil: droppedSpans.add(1, ordering: .relaxed)
        case true?: wakeUp.yield()
        case false?: break
        }
    }

    /// Exports what waits now, without waiting for the delay.
    public func flush() {
        wakeUp.yield()
    }

    /// Ends ``run()`` once it has sent what waits.
    public func shutdown() {
        wakeUp.finish()
    }

    /// Exports until ``shutdown()``, then what is left. Cancelling it stops the export under way.
    public func run() async {
        let delay = configuration.scheduleDelay
        let ticker = Task { [wakeUp] in
            while !Task.isCancelled {
                try? await Task.sleep(for: delay)
                wakeUp.yield()
            }
        }
        for await _ in wakeUps {
            await exportWaiting()
            if Task.isCancelled { break }
        }
        ticker.cancel()
        if !Task.isCancelled { await exportWaiting() }
    }

    /// Sends the spans waiting, a batch at a time. They are taken all at once, the queue left
    /// empty: taking a batch off the front of a long queue moved the rest under the lock that
    /// every span's end takes. While they are sent, the queue fills again, up to its size.
    private func exportWaiting() async {
        var waiting: [FinishedSpan] = []
        queue.withLock { swap(&waiting, &$0) }
        var start = 0
        while start < waiting.count {
            let end = min(start + configuration.maxExportBatchSize, waiting.count)
            report(await export(Array(waiting[start..<end])))
            start = end
            if Task.isCancelled { return }
        }
    }

    private func export(_ batch: [FinishedSpan]) async -> Outcome {
        let body: Data
        do {
            body = try ExportRequestEncoding.encode(batch, resource: configuration.resource)
        } catch {
            return .failed(spans: batch.count, reason: "the spans could not be encoded: \(error)")
        }
        let request = HTTPRequest(
            method: "POST", url: configuration.endpoint,
            headers: [("Content-Type", "application/x-protobuf")] + configuration.headers, body: body)
        do {
            let response = try await HTTPCalls.perform(
                request, timeout: configuration.exportTimeout, bodyLimit: 1 << 20)
            guard (200..<300).contains(response.status) else {
                return .failed(spans: batch.count, reason: "the collector answered HTTP \(response.status)")
            }
            return .exported(spans: batch.count)
        } catch {
            return .failed(spans: batch.count, reason: "\(error)")
        }
    }
}
