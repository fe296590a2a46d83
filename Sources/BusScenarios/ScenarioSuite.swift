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
