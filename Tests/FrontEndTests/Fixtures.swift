import AlertsFeature
import BureauSchemas
import Bus
import ConverterFeature
import EventLog
import Foundation
import FrontEnd
import ReservationsFeature
import Runtime
import SwiftProtobuf
import SystemFeature
import Testing
import WatchlistFeature

/// Events and states for the headless tests: a small, fixed history of a bureau.
enum Fixtures {
    /// The router over every feature's commands, as `bureau tui` builds it.
    static let router = CommandRouter(
        commands: WatchlistModule.commands + ConverterModule.commands + ReservationsModule.commands
            + AlertsModule.commands)

    static func event(
        _ position: UInt64, _ message: some SwiftProtobuf.Message & Sendable, correlation: EventID = .zero
    ) -> StoredEvent {
        StoredEvent(
            position: position, id: .derived(module: "test", position: position, index: 0),
            type: Emitted(message).type, commitTime: CommitTime(seconds: 1_700_000_000 + Int64(position), nanos: 0),
            correlation: correlation, payload: (try? Emitted(message).payload()) ?? Data())
    }

    static func rates(_ asOf: String, _ values: [String: String]) -> RatesPublished {
        RatesPublished(asOf: asOf, rates: values, source: "test")
    }

    static func pairAdded(_ base: String, _ quote: String) -> PairAdded {
        var added = PairAdded()
        added.base = base
        added.quote = quote
        return added
    }

    /// A history with two fixings, three pairs, an amount, three reservations, two alerts and an error.
    static var history: [StoredEvent] {
        var amount = AmountChanged()
        amount.value = "250.00"
        amount.currency = "EUR"
        func accepted(_ id: String, _ amount: String, _ quoteAmount: String) -> ReservationAcceptedV2 {
            var accepted = ReservationAcceptedV2()
            accepted.reservationID = id
            accepted.base = "EUR"
            accepted.quote = "USD"
            accepted.amount = amount
            accepted.rate = "1.0832"
            accepted.grossAmount = quoteAmount
            accepted.commissionRate = "0"
            accepted.commission = "0.00"
            accepted.netAmount = quoteAmount
            accepted.asOf = "2024-05-03"
            accepted.commissionBasis = .schedule
            return accepted
        }
        var confirmed = ReservationConfirmed()
        confirmed.reservationID = "R7"
        confirmed.confirmationCode = "BK-1001"
        var failed = ReservationFailed()
        failed.reservationID = "R8"
        failed.reason = "booking service refused: limit"
        var cancelled = ReservationCancelled()
        cancelled.reservationID = "R9"
        func armed(_ id: String, _ direction: AlertDirection, _ threshold: String) -> AlertArmed {
            var armed = AlertArmed()
            armed.alertID = id
            armed.base = "EUR"
            armed.quote = "USD"
            armed.direction = direction
            armed.threshold = threshold
            return armed
        }
        var triggered = AlertTriggered()
        triggered.alertID = "A11"
        triggered.rate = "1.0832"
        triggered.asOf = "2024-05-03"
        var error = ErrorRaised()
        error.module = "rates-adapter"
        error.code = "timeout"
        error.message = "the rates source did not answer within 5 s"
        return [
            event(1, rates("2024-05-02", ["USD": "1.0780", "GBP": "0.85710", "JPY": "165.44", "CHF": "0.9790"])),
            event(2, pairAdded("EUR", "USD")),
            event(3, pairAdded("EUR", "GBP")),
            event(4, pairAdded("USD", "JPY")),
            event(5, amount),
            event(6, rates("2024-05-03", ["USD": "1.0832", "GBP": "0.85620", "JPY": "165.44", "CHF": "0.9801"])),
            event(7, accepted("R7", "500.00", "541.60")),
            event(8, accepted("R8", "100.00", "108.32")),
            event(9, accepted("R9", "20.00", "21.66")),
            event(10, confirmed), event(11, failed), event(12, cancelled),
            event(13, armed("A11", .above, "1.08")), event(14, armed("A12", .below, "1.00")),
            event(15, triggered), event(16, error),
        ].map { event in
            var event = event
            // The booking outcomes and the error come from other producers; only types matter here.
            event.producerModule = "test"
            return event
        }
    }

    /// The state after ``history``, connected at its head.
    static var state: AppState {
        var state = AppState(connection: Connection(isConnected: true, head: 16, caughtUp: true))
        let coordinator = Coordinator(router: router)
        for event in history { _ = coordinator.handle(.delivered(.event(event)), in: &state) }
        return state
    }
}

/// Compares screens with the reviewed text files in Snapshots/.
enum Snapshot {
    /// Where recorded snapshots are written: the source folder, for review and commit.
    static let sourceDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Snapshots")

    /// Expects `text` to equal the snapshot `name`. A missing snapshot (or BUREAU_RECORD_SNAPSHOTS=1)
    /// is written to the source folder and the test fails, so that a person reviews it.
    static func expect(_ text: String, matches name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let file = name + ".txt"
        let recording = ProcessInfo.processInfo.environment["BUREAU_RECORD_SNAPSHOTS"] == "1"
        let stored =
            Bundle.module.url(forResource: name, withExtension: "txt", subdirectory: "Snapshots")
            .flatMap { try? String(contentsOf: $0, encoding: .utf8) }
        if let stored, !recording {
            #expect(text + "\n" == stored, "screen differs from Snapshots/\(file)", sourceLocation: sourceLocation)
            if text + "\n" != stored {
                try? (text + "\n").write(
                    to: URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(file), atomically: true,
                    encoding: .utf8)
            }
            return
        }
        try? (text + "\n").write(to: sourceDirectory.appendingPathComponent(file), atomically: true, encoding: .utf8)
        Issue.record("recorded Snapshots/\(file); review it and run again", sourceLocation: sourceLocation)
    }
}
