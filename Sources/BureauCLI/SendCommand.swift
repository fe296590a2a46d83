import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import LogTools
import Runtime

struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a command URL and print the answer.",
        discussion: HelpText.prose(
            """
            Routes the URL to its module's request event, publishes it, and waits for the answer
            correlated with it: an accepted fact (exit 0) or a rejection (exit 1). With
            --outcome, also waits for the later outcome (a booking confirmed or failed). A URL
            that does not route is reported (exit 64) and nothing is published.

            Examples:
              bureau send 'bureau://watchlist/add?base=EUR&quote=USD'
              bureau send 'bureau://reservations/reserve?base=EUR&quote=USD&amount=500.00&rate=1.0832' --outcome
            `bureau commands` lists every command.
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var connection: BusConnectionOptions
    @Argument(help: "The command URL, e.g. bureau://watchlist/add?base=EUR&quote=USD") var url: String
    @Flag(help: "Print the answer as JSON.") var json = false
    @Option(
        help: "Seconds to wait for the answer, 0.001 to 3600. (default: 10)",
        transform: BoundedNumber.decimals(in: 0.001...3600))
    var timeout: Double = 10
    @Flag(help: "After an accepted answer, wait for the outcome too.") var outcome = false
    @OptionGroup var traces: TraceOptions

    func run() async throws {
        try await traces.exporting(process: "send", global: global) { try await send() }
    }

    func send() async throws {
        let route: CommandRouter.Route
        do {
            route = try Composition.registry().router.route(url)
        } catch {
            throw usageError(error.description)
        }
        let wait = BoundedNumber.duration(seconds: timeout)
        let client = try connection.client(
            process: "send", publishTimeout: wait, global: global, upcasting: try Composition.upcasting())
        defer { client.close() }
        let trace = CommandTrace.start(route.command)
        defer { trace?.end() }
        let deadline = ContinuousClock.now + wait
        let command = route.command
        let classifier = AnswerClassifier(command)
        let (request, answers, answer) = try await Self.send(route, through: client, until: deadline, trace: trace)
        try show(
            answer, else: "answer", "is `bureau run \(command.module)` running?", waited: wait, trace: trace,
            classifier: classifier)
        guard outcome, !classifier.outcomeTypes.isEmpty else { return }
        let result = try await answers.first(until: deadline) { event in
            classifier.verdict(of: event, answering: request.id)?.isAnswer == false
        }
        try show(
            result, else: "outcome", "is the booking adapter running?", waited: wait, trace: trace,
            classifier: classifier)
    }

    /// Prints `event` (the answer or the outcome) and notes it in `trace`; throws if it is a
    /// failure, or if none came within `wait`: "no `what` within … s; `question`".
    private func show(
        _ event: StoredEvent?, else what: String, _ question: String, waited wait: Duration, trace: CommandTrace?,
        classifier: AnswerClassifier
    ) throws {
        guard let event else {
            trace?.fail("no \(what)")
            throw CLIError("no \(what) within \(wait.secondsText()) s; \(question)")
        }
        trace?.received(event)
        print(json ? event.jsonLine : event.line)
        if classifier.verdict(type: event.type)?.isFailure == true { throw ExitCode.failure }
    }

    /// Publishes the request `route` makes (under `trace`, when the action is traced) and
    /// waits for its answer until `deadline`; returns the request, the stream that brought the
    /// answer (for an outcome to come), and the answer, nil if none came in time.
    static func send(
        _ route: CommandRouter.Route, through client: any EventBus, until deadline: ContinuousClock.Instant,
        trace: CommandTrace? = nil
    ) async throws -> (request: OutgoingEvent, answers: AnswerStream, answer: StoredEvent?) {
        let untraced = try route.request.outgoing(id: .random(), module: "")
        let request = trace?.traced(untraced) ?? untraced
        let classifier = AnswerClassifier(route.command)
        // Subscribe before publishing, from the head, so that the answer cannot be missed.
        let head = try await client.ping(timeout: max(.milliseconds(1), deadline - .now)).head
        let answers = AnswerStream(client.subscribe(EventFilter(prefixes: classifier.types), after: head))
        switch try await client.publish(request) {
        case .rejected(let reason):
            trace?.fail("the bus refused the request")
            throw CLIError("the bus refused the request: \(reason)")
        case .committed, .duplicate: break
        }
        let answer = try await answers.first(until: deadline) { event in
            classifier.verdict(of: event, answering: request.id)?.isAnswer == true
        }
        return (request, answers, answer)
    }
}
