import Bus
import EventLog
import Logging
import Runtime
import TerminalUI

/// `bureau tui` at work: the terminal, the bus and the state, wired together.
///
/// One loop owns the ``AppState``; the terminal's input, the bus subscription, a ping and the
/// publishes run as tasks that only send it inputs, and every input goes through the
/// ``Coordinator``, which also says when to subscribe again (the shared backoff);
/// the frame is redrawn with the diff renderer at most every 40 ms while events stream in,
/// and at once after a key or a resize. When the bus stops answering, the state is kept and
/// shown as stale; the subscription resumes from the last position it delivered. The
/// coordinator's effects are performed here, at the edge: the publishes, the subscriptions,
/// the spans of the traced requests (``RequestTraces``), a full repaint.
public struct LiveSession: Sendable {
    public let client: any EventBus
    public let router: CommandRouter
    public let colorMode: ColorMode
    public let logger: Logger
    /// What the front-end consumes and publishes, for swift-metrics and the bus's progress reports.
    public let metrics: ConsumerMetrics?

    public init(
        client: any EventBus, router: CommandRouter, colorMode: ColorMode, logger: Logger,
        metrics: ConsumerMetrics? = nil
    ) {
        self.client = client
        self.router = router
        self.colorMode = colorMode
        self.logger = logger
        self.metrics = metrics
    }

    enum Input: Sendable {
        case terminal(TerminalEvent)
        case session(SessionInput)
        case tick
    }

    /// Runs until the person quits; the terminal is restored on return, on a quit signal and on a crash.
    public func run() async throws(TerminalError) {
        try await Terminal.withFullScreen(colorMode: colorMode) { terminal, input in
            await present(terminal, input)
        }
    }

    private func present(_ terminal: Terminal, _ input: TerminalInput) async {
        let (inputs, sink) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .unbounded)
        let tasks = [
            Task { for await event in input.events { sink.yield(.terminal(event)) } },
            Task { await Self.ping(client, into: sink) },
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(40))
                    sink.yield(.tick)
                }
            },
        ]
        // The subscription under way: one at a time, started by the coordinator's effects.
        var subscription: Task<Void, Never>?
        defer {
            for task in tasks { task.cancel() }
            subscription?.cancel()
        }

        let coordinator = Coordinator(router: router)
        var state = AppState(size: terminal.size)
        var renderer = Renderer(colorMode: colorMode)
        var dirty = true
        // The spans of the traced requests, started and ended as the coordinator's effects say.
        var traces = RequestTraces()
        defer { traces.endAll() }
        func draw() {
            let frame = RootView(state: state).rendered(width: state.size.columns, height: state.size.rows)
            terminal.write(renderer.render(frame))
            dirty = false
        }
        /// Performs what the coordinator asked for; false to quit.
        func perform(_ effects: [Effect]) -> Bool {
            for effect in effects {
                switch effect {
                case .quit:
                    return false
                case .dispatch(let url):
                    // A traced request is published under its trace's id (CommandTrace).
                    let trace = traces.start(url, router: router)
                    let dispatched = SessionInput.dispatched(
                        url, id: trace?.id ?? EventID.random(), traceParent: trace?.spanID)
                    guard perform(coordinator.handle(dispatched, in: &state)) else { return false }
                case .publish(let outgoing):
                    publish(outgoing, sink: sink)
                case .trace(let id, let step):
                    traces.perform(step, for: id)
                case .repaint:
                    renderer.invalidate()
                    dirty = true
                case .subscribe(let position, let delay):
                    subscription?.cancel()
                    subscription = Task { [client, logger, metrics] in
                        await Self.follow(
                            client, after: position, delay: delay, into: sink, logger: logger, metrics: metrics)
                    }
                }
            }
            return true
        }
        _ = perform(coordinator.handle(.started, in: &state))
        draw()
        loop: for await next in inputs {
            switch next {
            case .terminal(let event):
                // What the person does is drawn at once.
                for input in Self.inputs(of: event) {
                    guard perform(coordinator.handle(input, in: &state)) else { break loop }
                }
                draw()
            case .session(let input):
                guard perform(coordinator.handle(input, in: &state)) else { break loop }
                dirty = true
            case .tick:
                if dirty { draw() }
            }
        }
    }

    /// What the terminal's `event` is to the coordinator.
    static func inputs(of event: TerminalEvent) -> [SessionInput] {
        switch event {
        case .keys(let keys): keys.map(SessionInput.key)
        case .resized(let size): [.resized(size)]
        case .closed: [.terminalClosed]
        }
    }

    /// Publishes a request the coordinator recorded; a refusal comes back as an input.
    private func publish(_ outgoing: OutgoingEvent, sink: AsyncStream<Input>.Continuation) {
        let id = outgoing.id
        logger.info("dispatching", metadata: ["frontend.type": "\(outgoing.type)", "frontend.id": "\(id)"])
        let client = client
        let metrics = metrics
        Task {
            do {
                if case .rejected(let reason) = try await client.publish(outgoing) {
                    sink.yield(.session(.publishFailed(id, reason: "the bus refused it: \(reason)")))
                } else {
                    metrics?.published(1)
                }
            } catch {
                sink.yield(.session(.publishFailed(id, reason: "the bus did not take it: \(error)")))
            }
        }
    }

    /// Follows every event after `position`, once `delay` has passed, until the subscription
    /// fails or ends; then says so, and the coordinator decides when to subscribe again.
    static func follow(
        _ client: any EventBus, after position: UInt64, delay: Duration,
        into sink: AsyncStream<Input>.Continuation, logger: Logger, metrics: ConsumerMetrics? = nil
    ) async {
        if delay > .zero {
            do { try await Task.sleep(for: delay) } catch { return }
        }
        let subscription = client.subscribe(.all, after: position)
        defer { subscription.cancel() }
        metrics?.follow(subscription)
        let problem: String
        do {
            for try await item in subscription {
                if case .event = item { metrics?.inputApplied() }
                sink.yield(.session(.delivered(item)))
            }
            problem = "the subscription ended"
        } catch BusError.aheadOfLog(let position, let head, let epoch) {
            logger.error(
                "the bus's log ends before what this front-end has shown: stopped following",
                metadata: ["frontend.position": "\(position)", "bus.head": "\(head)", "bus.epoch": "\(epoch)"])
            if !Task.isCancelled { sink.yield(.session(.aheadOfLog(position: position, head: head, epoch: epoch))) }
            return
        } catch {
            logger.warning("subscription failed", metadata: ["frontend.error": "\(error)"])
            problem = "\(error)"
        }
        if !Task.isCancelled { sink.yield(.session(.subscriptionEnded(problem: problem))) }
    }

    /// Asks the bus for its head every second; a ping that fails marks the bus as down, and why.
    static func ping(_ client: any EventBus, into sink: AsyncStream<Input>.Continuation) async {
        while !Task.isCancelled {
            do {
                let status = try await client.ping(timeout: .seconds(1))
                sink.yield(.session(.pinged(head: status.head, problem: nil)))
            } catch {
                // The error says which: no answer in time, or a bus that refused or cannot be reached.
                sink.yield(.session(.pinged(head: nil, problem: "\(error)")))
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
