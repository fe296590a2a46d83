import Runtime

/// The scenarios of one file, run in order against one deployment: later scenarios see what
/// earlier ones did, and may use the values they captured.
public struct ScenarioSuite: Sendable {
    /// The file's path, as given.
    public let file: String
    /// Steps run once, before the first scenario (a background: rates, a watched pair).
    public let given: [ScenarioStep]
    public let scenarios: [Scenario]
}

/// Given these steps, when this one, expect these events.
public struct Scenario: Sendable {
    public let name: String
    public let line: Int
    public let given: [ScenarioStep]
    public let when: ScenarioStep
    public let expect: [ExpectedEvent]
    public let exhaustive: Bool
    public let timeout: Duration?
}

/// Something a scenario publishes: an event, or a command URL routed to its request.
public enum ScenarioStep: Sendable {
    case event(type: String, payload: JSONValue, line: Int)
    case command(url: String, line: Int)

    public var line: Int {
        switch self {
        case .event(_, _, let line), .command(_, let line): line
        }
    }
}

/// An event a scenario expects, and the values to keep from it for later steps.
public struct ExpectedEvent: Sendable {
    public let type: String
    /// The fields that must match (others are not compared); `*` matches any value.
    public let fields: JSONValue
    /// Variable name → field path in the payload: `${name}` in later steps is that field's value.
    public let captures: [(variable: String, path: String)]
    public let line: Int
}
