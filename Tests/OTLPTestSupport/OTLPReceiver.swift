import Foundation
import Guards
import Hummingbird
import Logging
import OTLPTracing
import ServiceLifecycle
import SwiftProtobuf
import Synchronization

/// A span as an OTLP/HTTP export carried it, decoded with OpenTelemetry's own definitions.
public struct ReceivedSpan: Sendable, Equatable, CustomStringConvertible {
    /// The trace id, 32 hex digits.
    public let traceID: String
    /// 16 hex digits.
    public let spanID: String
    /// 16 hex digits; empty for a root.
    public let parentSpanID: String
    public let name: String
    /// The exporting process's `service.name`.
    public let service: String
    /// Its resource's attributes, and its own, as text.
    public let resource: [String: String]
    public let attributes: [String: String]
    public let startNanos: UInt64
    public let endNanos: UInt64

    public var description: String {
        "\(service): \(name) \(spanID) ← \(parentSpanID.isEmpty ? "root" : parentSpanID)"
    }
}

/// An OpenTelemetry collector for tests: `POST /v1/traces` (OTLP/HTTP, protobuf), each export
/// decoded as an `ExportTraceServiceRequest` and its spans kept; anything else is answered 400
/// and counted. Listens on 127.0.0.1, on a port it picks; ``stop()`` ends it.
public final class OTLPReceiver: Sendable {
    private let store = SpanStore()
    private let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    /// The endpoint a process exports to (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Starts listening; returns once it does.
    public init() async {
        let store = self.store
        let router = Router()
        router.post("/v1/traces") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 16 << 20)
            guard request.headers[.contentType] == "application/x-protobuf",
                let decoded = try? Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest(
                    serializedBytes: Data(buffer: body))
            else {
                store.refuse("\(request.headers[.contentType] ?? "no content type"), \(body.readableBytes) bytes")
                return Response(status: .badRequest)
            }
            store.keep(decoded)
            let answer = try Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceResponse().serializedData()
            return Response(
                status: .ok, headers: [.contentType: "application/x-protobuf"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer)))
        }
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in listening.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "otlp-receiver"))
        let group = ServiceGroup(services: [application], logger: Logger(label: "otlp-receiver"))
        self.group = group
        task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        port = await iterator.next() ?? 0
    }

    /// Every span received so far.
    public var spans: [ReceivedSpan] { store.spans }
    /// Exports received.
    public var exports: Int { store.exports }
    /// Requests refused (not OTLP protobuf), with what they were.
    public var refused: [String] { store.refused }

    /// Waits until the spans received satisfy `wanted`, at most `timeout`; returns them either way.
    @discardableResult
    public func spans(
        within timeout: Duration, where wanted: @escaping @Sendable ([ReceivedSpan]) -> Bool
    ) async -> [ReceivedSpan] {
        await store.wait(within: timeout, for: wanted)
        return store.spans
    }

    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    deinit { task.cancel() }
}

/// What the receiver holds, and who waits for what.
final class SpanStore: Sendable {
    private struct Waiter {
        let id: Int
        let wanted: @Sendable ([ReceivedSpan]) -> Bool
        let resume: CheckedContinuation<Void, Never>
    }

    private struct State {
        var spans: [ReceivedSpan] = []
        var exports = 0
        var refused: [String] = []
        var waiters: [Waiter] = []
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    var spans: [ReceivedSpan] { state.withLock { $0.spans } }
    var exports: Int { state.withLock { $0.exports } }
    var refused: [String] { state.withLock { $0.refused } }

    func refuse(_ what: String) {
        state.withLock { $0.refused.append(what) }
    }

    func keep(_ request: Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest) {
        var received: [ReceivedSpan] = []
        for resourceSpans in request.resourceSpans {
            let resource = Self.text(resourceSpans.resource.attributes)
            for scope in resourceSpans.scopeSpans {
                for span in scope.spans {
                    received.append(
                        ReceivedSpan(
                            traceID: Self.hex(span.traceID), spanID: Self.hex(span.spanID),
                            parentSpanID: Self.hex(span.parentSpanID), name: span.name,
                            service: resource["service.name"] ?? "", resource: resource,
                            attributes: Self.text(span.attributes), startNanos: span.startTimeUnixNano,
                            endNanos: span.endTimeUnixNano))
                }
            }
        }
        let ready = state.withLock { state in
            state.exports += 1
            state.spans += received
            let spans = state.spans
            let ready = state.waiters.filter { $0.wanted(spans) }
            state.waiters.removeAll { $0.wanted(spans) }
            return ready
        }
        for waiter in ready { waiter.resume.resume() }
    }

    /// Returns once the spans satisfy `wanted`, or `timeout` has passed.
    func wait(within timeout: Duration, for wanted: @escaping @Sendable ([ReceivedSpan]) -> Bool) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        _ = await Timeout.result(within: timeout) {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let now = self.state.withLock { state in
                        if Task.isCancelled || wanted(state.spans) { return true }
                        state.waiters.append(Waiter(id: id, wanted: wanted, resume: continuation))
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                let late = self.state.withLock { state in
                    let late = state.waiters.filter { $0.id == id }
                    state.waiters.removeAll { $0.id == id }
                    return late
                }
                for waiter in late { waiter.resume.resume() }
            }
        }
    }

    static func hex(_ bytes: Data) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    static func text(_ attributes: [Opentelemetry_Proto_Common_V1_KeyValue]) -> [String: String] {
        var text: [String: String] = [:]
        for attribute in attributes {
            switch attribute.value.value {
            case .stringValue(let value): text[attribute.key] = value
            case .intValue(let value): text[attribute.key] = String(value)
            case .boolValue(let value): text[attribute.key] = String(value)
            case .doubleValue(let value): text[attribute.key] = String(value)
            default: text[attribute.key] = "\(attribute.value)"
            }
        }
        return text
    }
}
