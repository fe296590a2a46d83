import Bus
import EventLog
import Runtime

/// The traces of the requests this front-end sent (``CommandTrace``), each open until its last
/// answer is back: the answer, or the outcome when the command has one.
struct RequestTraces {
    private var open: [EventID: CommandTrace] = [:]

    /// A trace for sending `url`, when tracing is on and it routes; its request is published
    /// under the trace's id.
    static func start(_ url: String, router: CommandRouter) -> CommandTrace? {
        guard BusTracing.isOn, let route = try? router.route(url) else { return nil }
        return CommandTrace.start(route.command)
    }

    mutating func sent(_ trace: CommandTrace) {
        open[trace.id] = trace
    }

    /// Notes `event`, once `requests` has applied it: an answer to a traced request is a hop
    /// back at the sender, and the last one ends the request's trace.
    mutating func observe(_ event: StoredEvent, in requests: RequestTracker) {
        guard !open.isEmpty, let trace = open[event.correlation],
            let request = requests.requests.last(where: { $0.id == event.correlation }),
            let verdict = request.classifier?.verdict(of: event, answering: event.correlation)
        else { return }
        trace.received(event)
        let last = !verdict.isAnswer || request.classifier?.outcomeTypes.isEmpty != false || verdict.isFailure
        guard last else { return }
        if verdict.isFailure { trace.fail("answered with \(event.type)") }
        trace.end()
        open[event.correlation] = nil
    }

    /// The request `id` never reached the bus.
    mutating func failed(_ id: EventID) {
        guard let trace = open.removeValue(forKey: id) else { return }
        trace.fail("not published")
        trace.end()
    }

    /// Ends every trace still open: the front-end is closing.
    mutating func endAll() {
        for trace in open.values { trace.end() }
        open = [:]
    }
}
