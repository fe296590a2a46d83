import Bus
import Tracing

extension BookingAdapterService {
    /// ``perform(_:)``, inside a span that continues the trace of the event that asked for the
    /// work, when tracing is on and that event carries one: the calls to the service are its
    /// children (``HTTPBookingService``), and the outcomes it publishes carry it as their parent.
    func performTraced(_ work: Work) async {
        guard BusTracing.isOn, work.traceParent != 0 else { return await perform(work) }
        let parent = TraceParent(
            traceID: work.correlation == .zero ? work.eventID : work.correlation, spanID: work.traceParent)
        let span = Tracing.startSpan(
            work.spanName, context: BusTracing.context(continuing: parent), ofKind: .consumer)
        span.attributes.set("messaging.system", value: .string("bureau"))
        span.attributes.set("messaging.operation.type", value: .string("process"))
        span.attributes.set("messaging.message.id", value: .string(work.eventID.description))
        span.attributes.set("bureau.position", value: .int64(Int64(clamping: work.position)))
        span.attributes.set("bureau.module", value: .string(Self.module))
        await InstrumentationContext.$current.withValue(span.context) { await perform(work) }
        span.end()
    }

    /// `events`, carrying the task's current span as their trace parent, when there is one.
    static func traced(_ events: [OutgoingEvent]) -> [OutgoingEvent] {
        guard let parent = BusTracing.currentParent() else { return events }
        var events = events
        for index in events.indices { events[index].traceParent = parent.spanID }
        return events
    }
}

extension BookingAdapterService.Work {
    /// What its span is called: what the adapter does, not for whom.
    var spanName: String {
        switch kind {
        case .book: "book reservation"
        case .cancel: "cancel reservation"
        }
    }
}
