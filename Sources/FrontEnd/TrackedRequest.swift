import Bus
import EventLog
import Runtime

/// A request the front-end sent through a command URL, and what became of it.
public struct TrackedRequest: Sendable, Equatable {
    public enum Status: Sendable, Equatable {
        /// Published or being published; no answer yet.
        case pending
        /// Answered with an accepted fact (its short type); an outcome may follow.
        case accepted(String)
        /// Answered with a rejection; the reason the module gave.
        case rejected(String)
        /// A later outcome: a booking confirmed (true) or failed (false), with its summary.
        case outcome(succeeded: Bool, String)
        /// It never reached a module: the URL did not route, or the bus did not take it.
        case failed(String)
    }

    /// The request's event id; answers carry it as their correlation. Nil if it was never published.
    public var id: EventID?
    /// The URL without its scheme, e.g. "watchlist/add?base=EUR&quote=USD".
    public var label: String
    public var status: Status
    /// Whether its trace (``CommandTrace``) is open: from a traced dispatch until its last answer
    /// is back (the answer, or the outcome when the command has one) or the bus did not take it.
    public internal(set) var isTraced: Bool
    /// Tells its answers and outcomes from other events; nil if it was never published.
    let classifier: AnswerClassifier?

    public init(id: EventID?, url: String, status: Status) {
        self.init(id: id, url: url, status: status, classifier: nil, isTraced: false)
    }

    init(id: EventID, url: String, command: CommandSpec, isTraced: Bool) {
        self.init(id: id, url: url, status: .pending, classifier: AnswerClassifier(command), isTraced: isTraced)
    }

    private init(id: EventID?, url: String, status: Status, classifier: AnswerClassifier?, isTraced: Bool) {
        self.id = id
        label = url.hasPrefix("bureau://") ? String(url.dropFirst("bureau://".count)) : url
        self.status = status
        self.classifier = classifier
        self.isTraced = isTraced
    }

    public static func == (lhs: TrackedRequest, rhs: TrackedRequest) -> Bool {
        lhs.id == rhs.id && lhs.label == rhs.label && lhs.status == rhs.status && lhs.isTraced == rhs.isTraced
    }
}
