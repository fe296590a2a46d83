import Guards
import OTLPTestSupport
import OTLPTracing
import Synchronization
import TestServers
import Testing
import Tracing

/// The tracer and its exporter against a collector of the test's own, over loopback.
@Suite(.timeLimit(.minutes(1)))
struct OTLPSpanExporterTests {
    @Test func endedSpansReachTheCollectorWithTheirParentsResourceAndAttributes() async throws {
        let receiver = await OTLPReceiver()
        var configuration = OTLPConfiguration(
            endpoint: receiver.endpoint + "/v1/traces", serviceName: "test", resource: ["bureau.process": "test"])
        configuration.scheduleDelay = .seconds(60)
        let outcomes = Mutex<[OTLPSpanExporter.Outcome]>([])
        let exporter = OTLPSpanExporter(configuration: configuration) { outcome in
            outcomes.withLock { $0.append(outcome) }
        }
        let tracer = OTLPTracer(exporter: exporter)
        let running = Task { await exporter.run() }

        let root = tracer.startSpan("root", context: .topLevel, ofKind: .producer)
        root.attributes.set("bureau.command", value: .string("watchlist/add"))
        let child = tracer.startSpan("child", context: root.context, ofKind: .consumer)
        child.setStatus(SpanStatus(code: .error, message: "refused"))
        child.end()
        root.end()
        root.operationName = "renamed after its end"
        // Carried over a process boundary as its header, then continued.
        var header: String?
        tracer.inject(child.context, into: &header, using: HeaderInjector())
        var remote = InstrumentationContext.topLevel
        tracer.extract(try #require(header), into: &remote, using: HeaderExtractor())
        let grandchild = tracer.startSpan("grandchild", context: remote, ofKind: .internal)
        grandchild.end()
        exporter.shutdown()
        await running.value

        let spans = await receiver.spans(within: .seconds(10)) { $0.count == 3 }
        await receiver.stop()
        let byName = Dictionary(uniqueKeysWithValues: spans.map { ($0.name, $0) })
        let rootSpan = try #require(byName["root"])
        #expect(rootSpan.parentSpanID.isEmpty)
        #expect(rootSpan.attributes["bureau.command"] == "watchlist/add")
        #expect(rootSpan.resource == ["service.name": "test", "bureau.process": "test"])
        #expect(try #require(byName["child"]).parentSpanID == rootSpan.spanID)
        #expect(try #require(byName["grandchild"]).parentSpanID == byName["child"]?.spanID)
        #expect(Set(spans.map(\.traceID)) == [rootSpan.traceID])
        #expect(rootSpan.startNanos <= rootSpan.endNanos)
        #expect(header == "00-\(rootSpan.traceID)-\(byName["child"]?.spanID ?? "")-01")
        #expect(outcomes.withLock { $0 } == [.exported(spans: 3)], "one batch, sent at the shutdown")
        #expect(receiver.refused.isEmpty)
    }

    @Test func aFullQueueDropsAndCountsSpansAndAnUnsampledTraceRecordsNone() async throws {
        var configuration = OTLPConfiguration(endpoint: "http://127.0.0.1:9/v1/traces", serviceName: "test")
        configuration.maxQueueSize = 2
        configuration.maxExportBatchSize = 2
        configuration.sampler = TraceSampler(root: .never, followsParent: true)
        let exporter = OTLPSpanExporter(configuration: configuration)
        let tracer = OTLPTracer(exporter: exporter)
        let unsampled = tracer.startSpan("not sampled", context: .topLevel, ofKind: .internal)
        #expect(!unsampled.isRecording)
        unsampled.end()
        #expect(exporter.dropped == 0)
        var parent = InstrumentationContext.topLevel
        tracer.extract(
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", into: &parent, using: HeaderExtractor())
        for index in 0..<5 {
            let span = tracer.startSpan("sampled \(index)", context: parent, ofKind: .internal)
            #expect(span.isRecording)
            span.end()
        }
        #expect(exporter.dropped == 3)
    }

    @Test func aCollectorThatCannotBeReachedFailsTheExportAndTheNextIsTriedAllTheSame() async throws {
        let port = try TCPPorts.free()
        var configuration = OTLPConfiguration(endpoint: "http://127.0.0.1:\(port)/v1/traces", serviceName: "test")
        configuration.maxExportBatchSize = 1
        let outcomes = Mutex<[OTLPSpanExporter.Outcome]>([])
        let exporter = OTLPSpanExporter(configuration: configuration) { outcome in
            outcomes.withLock { $0.append(outcome) }
        }
        let tracer = OTLPTracer(exporter: exporter)
        let running = Task { await exporter.run() }
        tracer.startSpan("one", context: .topLevel, ofKind: .internal).end()
        tracer.startSpan("two", context: .topLevel, ofKind: .internal).end()
        exporter.shutdown()
        await running.value
        let refused = "connection refused: nothing listens at 127.0.0.1:\(port)"
        #expect(outcomes.withLock { $0 } == [.failed(spans: 1, reason: refused), .failed(spans: 1, reason: refused)])
    }
}

struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout String?) {
        if key == "traceparent" { carrier = value }
    }
}

struct HeaderExtractor: Extractor {
    func extract(key: String, from carrier: String) -> String? {
        key == "traceparent" ? carrier : nil
    }
}
