import BureauSchemas
import Bus
import EventLog
import Runtime
import WatchlistFeature

/// The log the read-side benchmarks read, as a watchlist host would have left it: two rates
/// fixings, then add and remove EUR/USD requests in turn, each followed by the reducer's answer
/// (ids derived, causation and correlation set), committed a microsecond apart from position 1.
enum WatchlistSession {
    /// Calls `body` with each of the session's first `count` events (rounded down to even), in
    /// log order; how many there were.
    @discardableResult
    static func events(count: Int, _ body: (StoredEvent) throws -> Void) throws -> UInt64 {
        var replay = ReducerReplay(WatchlistReducer())
        var position: UInt64 = 0
        let start = CommitTime(seconds: 1_793_000_000, nanos: 0)

        func commit(_ event: OutgoingEvent, process: String) throws -> StoredEvent {
            position += 1
            let micros = Int64(position)
            let stored = StoredEvent(
                position: position, id: event.id, type: event.type,
                commitTime: CommitTime(
                    seconds: start.seconds + micros / 1_000_000, nanos: Int32(micros % 1_000_000) * 1000),
                producerProcess: process, producerModule: event.module, causation: event.causation,
                correlation: event.correlation, payload: event.payload)
            try body(stored)
            return stored
        }

        var rates = Bureau_Rates_RatesPublished(asOf: "2026-10-30", rates: ["USD": "1.1172"])
        // Two fixings, so that the requests and their answers make the count even.
        replay.apply(try commit(try OutgoingEvent(rates), process: "rates"))
        rates.asOf = "2026-10-31"
        replay.apply(try commit(try OutgoingEvent(rates), process: "rates"))
        let add = try PairAddRequested(base: "EUR", quote: "USD").serializedData()
        let remove = try PairRemoveRequested(base: "EUR", quote: "USD").serializedData()
        var index = 0
        while position + 2 <= UInt64(count) {
            let request =
                index % 2 == 0
                ? OutgoingEvent(type: PairAddRequested.protoMessageName, payload: add)
                : OutgoingEvent(type: PairRemoveRequested.protoMessageName, payload: remove)
            index += 1
            for answer in replay.apply(try commit(request, process: "bench"), keepOutputs: false) {
                _ = try commit(answer, process: "watchlist-host")
            }
        }
        return position
    }
}
