import Bus
import Tracing

extension ReducerHost {
    /// When the step of `event` begins, if it is to be traced (tracing is on and the event
    /// carries a trace); nil otherwise, at the cost of one atomic load.
    static func tracedStepBegins(for event: StoredEvent) -> DefaultTracerClock.Instant? {
        BusTracing.isOn && event.traceParent != 0 ? DefaultTracerClock.now : nil
    }

    /// The span of the step of `event` that began at `began`, a child of the span that published
    /// it; its outputs carry it as their trace parent. Started once the step is known to be an
    /// input's (a step that is none makes no span). The caller ends it once the outputs are
    /// handed to the outbox.
    static func stepSpan(
        for event: StoredEvent, module: String, began: DefaultTracerClock.Instant, step: ReducerStep.Kind,
        outputs: inout [OutgoingEvent]
    ) -> (any Span)? {
        guard let span = BusTracing.startSpan("reduce \(event.type)", continuing: event, at: began) else {
            return nil
        }
        span.attributes.set("messaging.operation.type", value: .string("process"))
        span.attributes.set("bureau.module", value: .string(module))
        span.attributes.set("bureau.outputs", value: .int64(Int64(outputs.count)))
        if step == .malformed {
            // The reason is the decoder's, which may quote the payload: the log's ErrorRaised has it.
            span.setStatus(SpanStatus(code: .error, message: "the input does not decode"))
        }
        if let parent = BusTracing.parent(of: span.context) {
            for index in outputs.indices { outputs[index].traceParent = parent.spanID }
        }
        return span
    }
}
