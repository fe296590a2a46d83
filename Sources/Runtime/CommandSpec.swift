/// A command a module offers at `bureau://<module>/<name>?…`, declared with its typed
/// parameters in one place: the router, `bureau send`, `bureau commands`, the front-end's
/// command line and its completion all read it.
public struct CommandSpec: Sendable {
    public let module: String
    public let name: String
    public let summary: String
    public let parameters: [Parameter]
    /// The event types that answer the request: an accepted fact or a rejection.
    public let answers: [String]
    /// The answers that mean the request was refused.
    public let rejections: [String]
    /// Later outcomes of an accepted request (a booking confirmed or failed…), if any.
    public let outcomes: [String]
    /// Outcomes that mean failure.
    public let failedOutcomes: [String]
    /// Builds the request event from checked arguments; throws for a rule across parameters.
    public let build: @Sendable (CommandArguments) throws(CommandError) -> Emitted

    public init(
        module: String, name: String, summary: String, parameters: [Parameter], answers: [String],
        rejections: [String], outcomes: [String] = [], failedOutcomes: [String] = [],
        build: @escaping @Sendable (CommandArguments) throws(CommandError) -> Emitted
    ) {
        self.module = module
        self.name = name
        self.summary = summary
        self.parameters = parameters
        self.answers = answers
        self.rejections = rejections
        self.outcomes = outcomes
        self.failedOutcomes = failedOutcomes
        self.build = build
    }

    /// `bureau://module/name?p=<kind>&…`, for help text.
    public var usage: String {
        let query = parameters.map { parameter in
            let item = "\(parameter.name)=<\(parameter.kind.placeholder)>"
            return parameter.isRequired ? item : "[\(item)]"
        }
        return "bureau://\(module)/\(name)" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    public struct Parameter: Sendable {
        public let name: String
        public let kind: ParameterKind
        public let isRequired: Bool
        public let help: String

        public init(_ name: String, _ kind: ParameterKind, required: Bool = true, help: String) {
            self.name = name
            self.kind = kind
            isRequired = required
            self.help = help
        }
    }
}
