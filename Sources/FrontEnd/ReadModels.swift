import AlertsFeature
import Bus
import ConverterFeature
import ReservationsFeature
import Runtime
import SystemFeature
import WatchlistFeature

/// Everything the screens show that comes from the log: each feature's projection value and
/// the most recent events, folded event by event.
///
/// It depends only on the events given, never on a live client, so a replay can fold a log up
/// to any position and hand the result to the same screens.
public struct ReadModels: Sendable, Equatable {
    public var watchlist = WatchlistProjection.Value()
    public var converter = ConverterProjection.Value()
    public var reservations = ReservationsProjection.Value()
    public var alerts = AlertsProjection.Value()
    public var errors = ErrorsProjection.Value()
    /// The latest events, oldest first, at most ``tailLimit``.
    public var tail: [EventLine] = []
    /// The position of the last event folded in; 0 before any.
    public var position: UInt64 = 0
    /// The events of the screens' types that could not be read, and were passed over: the
    /// status line says so, since a screen is then missing what they held.
    public var passedOver = PassedOver()

    public static let tailLimit = 200

    public init() {}

    /// Folds one event into every projection that takes its type.
    mutating func apply(_ event: StoredEvent) {
        Self.fold(WatchlistProjection(), event, into: &watchlist, passedOver: &passedOver)
        Self.fold(ConverterProjection(), event, into: &converter, passedOver: &passedOver)
        Self.fold(ReservationsProjection(), event, into: &reservations, passedOver: &passedOver)
        Self.fold(AlertsProjection(), event, into: &alerts, passedOver: &passedOver)
        Self.fold(ErrorsProjection(), event, into: &errors, passedOver: &passedOver)
        tail.append(EventLine(event))
        if tail.count > Self.tailLimit { tail.removeFirst(tail.count - Self.tailLimit) }
        position = max(position, event.position)
    }

    /// The read models after `events`, in order.
    public static func folding(_ events: some Sequence<StoredEvent>) -> ReadModels {
        var models = ReadModels()
        for event in events { models.apply(event) }
        return models
    }

    private static func fold<P: Projection>(
        _ projection: P, _ event: StoredEvent, into value: inout P.Value, passedOver: inout PassedOver
    ) {
        guard projection.filter.matches(event.type) else { return }
        do {
            try projection.apply(event, to: &value)
        } catch {
            passedOver.record(event, error)
        }
    }
}
