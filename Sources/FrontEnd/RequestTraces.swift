import Bus
import EventLog
import Runtime

/// The spans of the requests this front-end traces (``CommandTrace``), by request id: the edge's
/// half of tracing, which ``LiveSession`` owns as it owns the subscription's task.
///
/// Which request is traced and when its trace ends is decided by the coordinator
/// (``TrackedRequest/isTraced``); this only starts the spans, and takes the steps its
/// ``Effect/trace(_:_:)`` effects ask for.
struct RequestTraces {
    private var open: [EventID: CommandTrace] = [:]

    /// Starts the trace of sending `url`, when tracing is on and it routes: its request is then
    /// dispatched under the trace's id, carrying the trace's span as its trace parent.
    mutating func start(_ url: String, router: CommandRouter) -> CommandTrace? {
        guard BusTracing.isOn, let route = try? router.route(url), let trace = CommandTrace.start(route.command)
        else { return nil }
        open[trace.id] = trace
        return trace
    }

    /// Takes `step` in the trace of request `id`; nothing when it has none open.
    mutating func perform(_ step: Effect.TraceStep, for id: EventID) {
        guard let trace = open[id] else { return }
        switch step {
        case .receive(let event):
            trace.received(event)
        case .end(let failure):
            if let failure { trace.fail(failure) }
            trace.end()
            open[id] = nil
        }
    }

    /// Ends every trace still open: the front-end is closing.
    mutating func endAll() {
        for trace in open.values { trace.end() }
        open = [:]
    }
}
