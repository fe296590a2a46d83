import Foundation
import Tracing

/// The tracer a process bootstraps into ``InstrumentationSystem`` to export its spans over
/// OTLP/HTTP: W3C `traceparent` propagation, OpenTelemetry's samplers, and an
/// ``OTLPSpanExporter`` that batches ended spans to the collector.
public struct OTLPTracer: Tracer {
    public typealias Span = OTLPSpan

    public let exporter: OTLPSpanExporter
    private let sampler: TraceSampler

    public init(exporter: OTLPSpanExporter) {
        self.exporter = exporter
        sampler = exporter.configuration.sampler
    }

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> OTLPSpan {
        var context = context()
        let parent = context.spanIdentity
        var generator = SystemRandomNumberGenerator()
        let traceHigh = parent?.traceHigh ?? generator.next()
        let traceLow = parent?.traceLow ?? Self.nonZero(&generator)
        let identity = SpanIdentity(
            traceHigh: traceHigh, traceLow: traceLow, spanID: Self.nonZero(&generator),
            sampled: sampler.samples(traceLow: traceLow, parent: parent))
        context.spanIdentity = identity
        return OTLPSpan(
            name: operationName, context: context, identity: identity, parentSpanID: parent?.spanID ?? 0,
            kind: kind, startNanos: instant().nanosecondsSinceEpoch, exporter: identity.sampled ? exporter : nil)
    }

    public func forceFlush() {
        exporter.flush()
    }

    public func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {
        guard let header = extractor.extract(key: "traceparent", from: carrier),
            let identity = SpanIdentity(traceparent: header.trimmingCharacters(in: .whitespaces))
        else { return }
        context.spanIdentity = identity
    }

    public func inject<Carrier, Inject: Injector>(
        _ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {
        guard let identity = context.spanIdentity else { return }
        injector.inject(identity.traceparent, forKey: "traceparent", into: &carrier)
    }

    private static func nonZero(_ generator: inout SystemRandomNumberGenerator) -> UInt64 {
        var value: UInt64 = 0
        while value == 0 { value = generator.next() }
        return value
    }
}
