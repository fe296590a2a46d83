import Bus
import EventLog

/// Whether an event answers a request sent through a command, and how: the one place that
/// reads a ``CommandSpec``'s answers, rejections and outcomes. The front-end's request line,
/// `bureau send` and scenario files all ask it.
///
/// A module answers every request with an accepted fact or a rejection, correlated with the
/// request's id; some accepted requests later get an outcome (a booking confirmed or failed).
public struct AnswerClassifier: Sendable {
    /// What an event means for the request it answers.
    public enum Verdict: Sendable, Equatable {
        /// The answer: the module accepted the request. An outcome may follow.
        case accepted
        /// The answer: the module refused the request; the event says why.
        case rejected
        /// A later outcome of an accepted request: it succeeded (true) or failed (false).
        case outcome(succeeded: Bool)

        /// An answer (accepted or rejected) rather than an outcome.
        public var isAnswer: Bool {
            switch self {
            case .accepted, .rejected: true
            case .outcome: false
            }
        }

        /// A rejection or a failed outcome: what `bureau send` exits 1 for.
        public var isFailure: Bool {
            switch self {
            case .accepted, .outcome(succeeded: true): false
            case .rejected, .outcome(succeeded: false): true
            }
        }
    }

    public let command: CommandSpec

    public init(_ command: CommandSpec) {
        self.command = command
    }

    /// The event types that answer the request or report its outcome: what to subscribe to.
    public var types: [String] { command.answers + command.outcomes }

    /// The types of the answers (accepted or rejected).
    public var answerTypes: Set<String> { Set(command.answers) }

    /// The types of the outcomes.
    public var outcomeTypes: Set<String> { Set(command.outcomes) }

    /// What an event of `type` means for a request of this command; nil for a type that is
    /// neither an answer nor an outcome of it. A rejection is a rejection even if the spec
    /// lists it among the answers too, as it does.
    public func verdict(type: String) -> Verdict? {
        if command.rejections.contains(type) { return .rejected }
        if command.failedOutcomes.contains(type) { return .outcome(succeeded: false) }
        if command.outcomes.contains(type) { return .outcome(succeeded: true) }
        if command.answers.contains(type) { return .accepted }
        return nil
    }

    /// What `event` means for the request whose id is `request`; nil unless it is correlated
    /// with that request and is an answer or an outcome of it.
    public func verdict(of event: StoredEvent, answering request: EventID) -> Verdict? {
        guard event.correlation == request else { return nil }
        return verdict(type: event.type)
    }
}
