import Bus
import EventLog
import Runtime
import TerminalUI

/// The whole front-end as a value: what the log says, the link to the bus, the requests sent,
/// where the person is, and the size of the terminal it is drawn on.
public struct AppState: Sendable, Equatable {
    public var models: ReadModels
    public var connection: Connection
    public var requests: RequestTracker
    public var navigation: Navigation
    /// The terminal's size: what each frame is drawn to fill.
    public var size: TerminalSize

    public init(
        models: ReadModels = ReadModels(), connection: Connection = Connection(),
        requests: RequestTracker = RequestTracker(), navigation: Navigation = Navigation(),
        size: TerminalSize = TerminalSize(columns: 80, rows: 24)
    ) {
        self.models = models
        self.connection = connection
        self.requests = requests
        self.navigation = navigation
        self.size = size
    }

    /// Folds a delivered event into the read models and the request tracker; returns what it
    /// asks of the trace of a request it answers.
    mutating func receive(_ event: StoredEvent) -> [Effect] {
        models.apply(event)
        connection.head = max(connection.head, event.position)
        return requests.apply(event)
    }
}
