import Bus
import EventLog
import Runtime

/// The whole front-end as a value: what the log says, the link to the bus, the requests sent,
/// and where the person is.
public struct AppState: Sendable, Equatable {
    public var models: ReadModels
    public var connection: Connection
    public var requests: RequestTracker
    public var navigation: Navigation

    public init(
        models: ReadModels = ReadModels(), connection: Connection = Connection(),
        requests: RequestTracker = RequestTracker(), navigation: Navigation = Navigation()
    ) {
        self.models = models
        self.connection = connection
        self.requests = requests
        self.navigation = navigation
    }

    /// Folds a delivered event into the read models and the request tracker.
    mutating func receive(_ event: StoredEvent) {
        models.apply(event)
        requests.apply(event)
        connection.head = max(connection.head, event.position)
    }
}
