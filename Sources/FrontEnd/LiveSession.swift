import Bus
import EventLog
import Logging
import Runtime
import TerminalUI

/// `bureau tui` at work: the terminal, the bus and the state, wired together.
///
/// One loop owns the ``AppState``; the terminal's input, the bus subscription, a ping and the
/// publishes run as tasks that only send it inputs. Keys go through the ``Coordinator``;
/// the frame is redrawn with the diff renderer at most every 40 ms while events stream in,
/// and at once after a key. When the bus stops answering, the state is kept and shown as
/// stale; the subscription resumes from the last position it delivered.
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
        case bus(SubscriptionEvent)
        case busProblem(String)
        case pinged(head: UInt64?, problem: String?)
        case publishFailed(EventID, String)
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
            Task { await Self.follow(client, into: sink, logger: logger, metrics: metrics) },
            Task { await Self.ping(client, into: sink) },
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(40))
                    sink.yield(.tick)
                }
            },
        ]
        defer { for task in tasks { task.cancel() } }

        let coordinator = Coordinator(router: router)
        var state = AppState()
        var renderer = Renderer(colorMode: colorMode)
        var size = terminal.size
        var dirty = true
        var traces = RequestTraces()
        defer { traces.endAll() }
        func draw() {
            let frame = RootView(state: state).rendered(width: size.columns, height: size.rows)
            terminal.write(renderer.render(frame))
            dirty = false
        }
        draw()
        loop: for await next in inputs {
            switch next {
            case .terminal(.keys(let keys)):
                for key in keys {
                    for effect in coordinator.handle(key, in: &state) {
                        switch effect {
                        case .quit: break loop
                        case .dispatch(let url): dispatch(url, state: &state, traces: &traces, sink: sink)
                        }
                    }
                }
                draw()
            case .terminal(.resized(let newSize)):
                size = newSize
                renderer.invalidate()
                draw()
            case .terminal(.closed):
                break loop
            case .bus(.event(let event)):
                state.receive(event)
                traces.observe(event, in: state.requests)
                dirty = true
            case .bus(.caughtUp(let head)):
                state.connection.caughtUp = true
                state.connection.isConnected = true
                state.connection.problem = nil
                state.connection.head = max(state.connection.head, head)
                dirty = true
            case .bus(.connection(let connected)):
                state.connection.isConnected = connected
                if connected { state.connection.problem = nil } else { state.connection.problem = "no heartbeat" }
                dirty = true
            case .busProblem(let problem):
                state.connection.isConnected = false
                state.connection.problem = problem
                dirty = true
            case .pinged(let head, let problem):
                if let head {
                    state.connection.isConnected = true
                    state.connection.problem = nil
                    state.connection.head = max(state.connection.head, head)
                } else {
                    state.connection.isConnected = false
                    state.connection.problem = problem
                }
                dirty = true
            case .publishFailed(let id, let reason):
                state.requests.publishFailed(id, reason: reason)
                traces.failed(id)
                dirty = true
            case .tick:
                if dirty { draw() }
            }
        }
    }

    /// Routes and publishes a command URL; the tracker shows it pending until its answer arrives.
    private func dispatch(
        _ url: String, state: inout AppState, traces: inout RequestTraces, sink: AsyncStream<Input>.Continuation
    ) {
        // A traced request is published under its trace's id (CommandTrace).
        let trace = RequestTraces.start(url, router: router)
        let id = trace?.id ?? EventID.random()
        guard var outgoing = state.requests.start(url, router: router, id: id) else {
            trace?.end()
            return
        }
        if let trace {
            outgoing = trace.traced(outgoing)
            traces.sent(trace)
        }
        logger.info("dispatching", metadata: ["frontend.url": "\(url)", "frontend.id": "\(id)"])
        let client = client
        let metrics = metrics
        Task {
            do {
                if case .rejected(let reason) = try await client.publish(outgoing) {
                    sink.yield(.publishFailed(id, "the bus refused it: \(reason)"))
                } else {
                    metrics?.published(1)
                }
            } catch {
                sink.yield(.publishFailed(id, "the bus did not take it: \(error)"))
            }
        }
    }

    /// Follows every event from the start of the log; if the subscription fails, subscribes
    /// again after the last event it delivered.
    static func follow(
        _ client: any EventBus, into sink: AsyncStream<Input>.Continuation, logger: Logger,
        metrics: ConsumerMetrics? = nil
    ) async {
        var position: UInt64 = 0
        while !Task.isCancelled {
            let subscription = client.subscribe(.all, after: position)
            metrics?.follow(subscription)
            do {
                for try await item in subscription {
                    if case .event(let event) = item {
                        position = event.position
                        metrics?.inputApplied()
                    }
                    sink.yield(.bus(item))
                }
            } catch {
                logger.warning("subscription failed", metadata: ["frontend.error": "\(error)"])
                sink.yield(.busProblem("\(error)"))
            }
            subscription.cancel()
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Asks the bus for its head every second; an unanswered ping marks the bus as down.
    static func ping(_ client: any EventBus, into sink: AsyncStream<Input>.Continuation) async {
        while !Task.isCancelled {
            do {
                let status = try await client.ping(timeout: .seconds(1))
                sink.yield(.pinged(head: status.head, problem: nil))
            } catch {
                sink.yield(.pinged(head: nil, problem: "no answer to ping"))
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
