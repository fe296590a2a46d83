import Bus
import Runtime

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
