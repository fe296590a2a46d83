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

/// What a parameter's value must look like.
public enum ParameterKind: Sendable, Equatable {
    /// Three letters, e.g. EUR (case does not matter).
    case currency
    /// A decimal number: digits and an optional point, e.g. 500.00.
    case decimal
    /// An identifier with a letter prefix and digits, e.g. R1042.
    case identifier(prefix: String)

    public var placeholder: String {
        switch self {
        case .currency: "currency"
        case .decimal: "decimal"
        case .identifier(let prefix): "\(prefix)…"
        }
    }

    /// The value normalised (currencies upper-cased), or why it does not fit.
    func check(_ value: String) -> ParameterCheck {
        switch self {
        case .currency:
            let upper = value.uppercased()
            guard upper.count == 3, upper.allSatisfy({ $0 >= "A" && $0 <= "Z" }) else {
                return .invalid("expected a three-letter currency code such as EUR")
            }
            return .valid(upper)
        case .decimal:
            var sawDigit = false
            var sawPoint = false
            for (index, character) in value.enumerated() {
                switch character {
                case "0"..."9": sawDigit = true
                case "." where !sawPoint: sawPoint = true
                case "-" where index == 0, "+" where index == 0: continue
                default: return .invalid("expected a decimal number such as 500.00")
                }
            }
            return sawDigit ? .valid(value) : .invalid("expected a decimal number such as 500.00")
        case .identifier(let prefix):
            let upper = value.uppercased()
            guard upper.hasPrefix(prefix), upper.count > prefix.count,
                upper.dropFirst(prefix.count).allSatisfy(\.isNumber)
            else { return .invalid("expected an id such as \(prefix)42") }
            return .valid(upper)
        }
    }
}

/// A value checked against its parameter's kind.
enum ParameterCheck {
    case valid(String)
    case invalid(String)
}

/// The checked, normalised arguments of one command.
public struct CommandArguments: Sendable {
    public let values: [String: String]

    public init(values: [String: String]) {
        self.values = values
    }

    /// The value of a required parameter (the router has checked it is there).
    public subscript(name: String) -> String { values[name] ?? "" }

    public func optional(_ name: String) -> String? { values[name] }
}
