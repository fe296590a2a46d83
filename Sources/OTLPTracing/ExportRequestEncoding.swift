import Foundation
import SwiftProtobuf
import Tracing

/// Spans as OTLP's `ExportTraceServiceRequest`, in protobuf: one resource, one scope (`bureau`).
enum ExportRequestEncoding {
    typealias Request = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest
    typealias ProtoSpan = Opentelemetry_Proto_Trace_V1_Span
    typealias KeyValue = Opentelemetry_Proto_Common_V1_KeyValue
    typealias AnyValue = Opentelemetry_Proto_Common_V1_AnyValue

    static func encode(_ spans: [FinishedSpan], resource: [String: String]) throws -> Data {
        var scope = Opentelemetry_Proto_Trace_V1_ScopeSpans()
        scope.scope.name = "bureau"
        scope.spans = spans.map(span)
        var resourceSpans = Opentelemetry_Proto_Trace_V1_ResourceSpans()
        resourceSpans.resource.attributes = resource.sorted { $0.key < $1.key }.map {
            keyValue($0.key, .stringValue($0.value))
        }
        resourceSpans.scopeSpans = [scope]
        var request = Request()
        request.resourceSpans = [resourceSpans]
        return try request.serializedData()
    }

    static func span(_ span: FinishedSpan) -> ProtoSpan {
        var proto = ProtoSpan()
        proto.traceID = bytes(span.identity.traceHigh) + bytes(span.identity.traceLow)
        proto.spanID = bytes(span.identity.spanID)
        if span.parentSpanID != 0 { proto.parentSpanID = bytes(span.parentSpanID) }
        proto.flags = span.identity.sampled ? 1 : 0
        proto.name = span.name
        proto.kind = kind(span.kind)
        proto.startTimeUnixNano = span.startNanos
        proto.endTimeUnixNano = span.endNanos
        proto.attributes = attributes(span.attributes)
        proto.events = span.events.map { event in
            var proto = ProtoSpan.Event()
            proto.name = event.name
            proto.timeUnixNano = event.nanosecondsSinceEpoch
            proto.attributes = attributes(event.attributes)
            return proto
        }
        proto.links = span.links.map { link in
            var proto = ProtoSpan.Link()
            proto.traceID = bytes(link.identity.traceHigh) + bytes(link.identity.traceLow)
            proto.spanID = bytes(link.identity.spanID)
            proto.attributes = attributes(link.attributes)
            return proto
        }
        if let status = span.status {
            proto.status.code =
                switch status.code {
                case .ok: .ok
                case .error: .error
                }
            proto.status.message = status.message ?? ""
        }
        return proto
    }

    private static func kind(_ kind: SpanKind) -> ProtoSpan.SpanKind {
        switch kind {
        case .server: .server
        case .client: .client
        case .producer: .producer
        case .consumer: .consumer
        case .internal: .internal
        }
    }

    /// Big-endian, as OTLP's ids are.
    private static func bytes(_ value: UInt64) -> Data {
        withUnsafeBytes(of: value.bigEndian) { Data($0) }
    }

    private static func keyValue(_ key: String, _ value: AnyValue.OneOf_Value) -> KeyValue {
        var pair = KeyValue()
        pair.key = key
        pair.value.value = value
        return pair
    }

    private static func attributes(_ attributes: SpanAttributes) -> [KeyValue] {
        var pairs: [KeyValue] = []
        attributes.forEach { key, attribute in
            if let value = value(attribute) { pairs.append(keyValue(key, value)) }
        }
        return pairs.sorted { $0.key < $1.key }
    }

    private static func value(_ attribute: SpanAttribute) -> AnyValue.OneOf_Value? {
        func array(_ values: [AnyValue.OneOf_Value]) -> AnyValue.OneOf_Value {
            var array = Opentelemetry_Proto_Common_V1_ArrayValue()
            array.values = values.map { value in
                var any = AnyValue()
                any.value = value
                return any
            }
            return .arrayValue(array)
        }
        switch attribute {
        case .int32(let value): return .intValue(Int64(value))
        case .int64(let value): return .intValue(value)
        case .int32Array(let values): return array(values.map { .intValue(Int64($0)) })
        case .int64Array(let values): return array(values.map { .intValue($0) })
        case .double(let value): return .doubleValue(value)
        case .doubleArray(let values): return array(values.map { .doubleValue($0) })
        case .bool(let value): return .boolValue(value)
        case .boolArray(let values): return array(values.map { .boolValue($0) })
        case .string(let value): return .stringValue(value)
        case .stringArray(let values): return array(values.map { .stringValue($0) })
        case .stringConvertible(let value): return .stringValue(value.description)
        case .stringConvertibleArray(let values): return array(values.map { .stringValue($0.description) })
        default: return nil
        }
    }
}
