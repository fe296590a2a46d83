import Bus
import HTTPCalls
import Tracing

extension HTTPBookingService {
    /// A client span for one call, a child of the task's current span, with the request's
    /// `traceparent` header naming it (W3C trace context over HTTP); nil when tracing is off or
    /// the call is not part of a traced chain. Named by the method alone: the path holds ids.
    static func startCallSpan(_ method: String, headers: inout [(name: String, value: String)]) -> (any Span)? {
        guard BusTracing.currentParent() != nil, let context = InstrumentationContext.current else { return nil }
        let span = Tracing.startSpan(method, context: context, ofKind: .client)
        span.attributes.set("http.request.method", value: .string(method))
        if let parent = BusTracing.parent(of: span.context) {
            headers.removeAll { $0.name.lowercased() == "traceparent" }
            headers.append(("traceparent", parent.header))
        }
        return span
    }

    /// A failed call's span status: which kind of failure, not its reason (which may quote the
    /// service's answer).
    static func spanStatus(of error: BookingError) -> SpanStatus {
        switch error {
        case .transient: SpanStatus(code: .error, message: "not done; to be retried")
        case .refused: SpanStatus(code: .error, message: "refused by the service")
        case .unknown: SpanStatus(code: .error, message: "outcome unknown")
        case .invalidRequest: SpanStatus(code: .error, message: "not sent: the request could not be made")
        }
    }
}
