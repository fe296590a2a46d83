import Runtime

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
