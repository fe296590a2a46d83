import BureauSchemas
import Bus
import EventLog
import Foundation
import ReservationsFeature
import Runtime
import SwiftProtobuf
import Testing

/// What `bureau show reservations` and the reservations screen show, from the events.
struct ReservationsProjectionTests {
    let projection = ReservationsProjection()

    /// The projection's value after `messages`, in order.
    func shown(_ messages: [any SwiftProtobuf.Message]) -> ReservationsProjection.Value {
        var value = projection.initialValue
        for (index, message) in messages.enumerated() {
            let event = StoredEvent(
                position: UInt64(index + 1), id: .random(), type: type(of: message).protoMessageName,
                commitTime: CommitTime(seconds: 1_700_000_000, nanos: 0),
                payload: (try? message.serializedData()) ?? Data())
            do {
                try projection.apply(event, to: &value)
            } catch {
                Issue.record("\(event.type) at \(event.position) could not be folded: \(error)")
            }
        }
        return value
    }

    /// The reducer tests' accepted reservation, charged 0.5 % on the scheduled USD rate.
    static var accepted: ReservationAcceptedV2 {
        ReservationsReducerTests.accepted(commissionRate: "0.005", commission: "2.79", net: "555.81", basis: .schedule)
    }

    @Test func aReservationShowsTheGrossTheCommissionAndWhatIsReceived() {
        let row = shown([Self.accepted]).reservations.first
        #expect(row?.quoteAmount == "558.60 USD")
        #expect(row?.commission == "2.79 USD")
        #expect(row?.commissionBasis == "0.5 %")
        #expect(row?.netAmount == "555.81 USD")
    }

    @Test func aReservationAcceptedBeforeCommissionsFoldsToNoneAndSaysSo() throws {
        // Given a reservation stored before commissions, read as this build reads it
        var old = ReservationAccepted()
        old.reservationID = "R7"
        old.base = "EUR"
        old.quote = "JPY"
        old.amount = "100.00"
        old.rate = "157.25"
        old.quoteAmount = "15725"
        old.asOf = "2026-10-30"
        let stored = StoredEvent(
            position: 8, id: .random(), type: ReservationAccepted.protoMessageName,
            commitTime: CommitTime(seconds: 1_700_000_000, nanos: 0), payload: try old.serializedData())
        let upcasting = try EventUpcasting(
            ReservationsModule.upcasters, readTypes: [ReservationAcceptedV2.protoMessageName])
        let read = upcasting.upcast(stored)
        #expect(read.type == ReservationAcceptedV2.protoMessageName)
        #expect(read.upcast == .upcast(storedType: ReservationAccepted.protoMessageName, steps: 1))
        #expect(stored.payload == (try old.serializedData()), "the stored bytes are not changed")
        // When the read model folds it, then its commission is zero, in yen's minor units, and says why
        var value = ReservationsProjection().initialValue
        try ReservationsProjection().apply(read, to: &value)
        let row = try #require(value.reservations.first)
        #expect(row.quoteAmount == "15725 JPY")
        #expect(row.commission == "0 JPY")
        #expect(row.basis == .beforeCommissions)
        #expect(row.commissionBasis == "none: accepted before commissions")
        #expect(row.netAmount == "15725 JPY")
    }

    @Test func aReservationAcceptedTodayBeforeAnyRateIsSetSaysNoRateWasSetNotThatItCameBeforeCommissions() {
        // Given a reservation accepted while no commission rate had been set
        var accepted = Self.accepted
        accepted.commissionRate = "0"
        accepted.commission = "0.00"
        accepted.netAmount = "558.60"
        accepted.commissionBasis = .beforeCommissions
        // When it is folded, then it is charged nothing, because no rate was set for USD
        let row = shown([accepted]).reservations.first
        #expect(row?.basis == .noRate(currency: "USD"))
        #expect(row?.commissionBasis == "none: no rate set for USD")
    }

    @Test func aReservationThatDoesNotDecodeIsNotFoldedAndTheFoldSaysWhichItPassedOver() throws {
        // Given a reservation whose payload is cut short (a field of 5 bytes holding 1)
        let broken = StoredEvent(
            position: 9, id: .random(), type: ReservationAcceptedV2.protoMessageName, commitTime: .zero,
            payload: Data([0x0A, 0x05, 0x52]))
        // When it is folded with a good one, then the good one is shown and the broken one counted, named
        let fold = AnyProjection(ReservationsProjection()).fold()
        fold.apply(
            StoredEvent(
                position: 3, id: .random(), type: ReservationAcceptedV2.protoMessageName, commitTime: .zero,
                payload: try Self.accepted.serializedData()))
        fold.apply(broken)
        #expect(fold.render().contains("R2"))
        #expect(fold.passedOver.count == 1)
        #expect(fold.passedOver.first.map(\.position) == [9])
        #expect(
            fold.passedOver.description.hasPrefix(
                "1 event passed over: position 9 (bureau.reservations.ReservationAcceptedV2): "),
            "\(fold.passedOver)")
        #expect(throws: (any Error).self) {
            var value = ReservationsProjection().initialValue
            try ReservationsProjection().apply(broken, to: &value)
        }
    }

    @Test func aBookingWhoseOutcomeIsUnknownShowsThatItIsBeingCheckedThenTheAnswer() {
        // Given an accepted reservation, when its booking's outcome is unknown
        let unknown = BookingOutcomeUnknown(reservationID: "R2", call: .booking, reason: "timed out after 5000 ms")
        let checking = shown([Self.accepted, unknown])
        // then it shows unknown, and why
        #expect(checking.reservations.first?.status == "unknown")
        #expect(checking.reservations.first?.detail == "checking with the booking service (timed out after 5000 ms)")
        #expect(projection.render(checking).contains("unknown  checking with the booking service"))
        // and the service's answer replaces it
        let confirmed = shown([
            Self.accepted, unknown, ReservationConfirmed(reservationID: "R2", confirmationCode: "BK-7"),
        ])
        #expect(confirmed.reservations.first?.status == "confirmed")
        #expect(confirmed.reservations.first?.detail == "code BK-7")
        let failed = shown([Self.accepted, unknown, ReservationFailed(reservationID: "R2", reason: "not booked")])
        #expect(failed.reservations.first?.status == "failed")
        #expect(failed.reservations.first?.detail == "not booked")
    }

    @Test func aCancellationWhoseOutcomeIsUnknownShowsItThenTheCodeOnceCancelled() {
        let history: [any SwiftProtobuf.Message] = [
            Self.accepted, ReservationConfirmed(reservationID: "R2", confirmationCode: "BK-7"),
            CancellationAccepted(reservationID: "R2"),
            BookingOutcomeUnknown(reservationID: "R2", call: .cancellation, reason: "the connection was cut"),
        ]
        let checking = shown(history)
        #expect(checking.reservations.first?.status == "unknown")
        #expect(
            checking.reservations.first?.detail
                == "cancellation: checking with the booking service (the connection was cut)")
        let cancelled = shown(history + [ReservationCancelled(reservationID: "R2")])
        #expect(cancelled.reservations.first?.status == "cancelled")
        #expect(cancelled.reservations.first?.detail == "code BK-7")
        let kept = shown(history + [CancellationFailed(reservationID: "R2", reason: "closed")])
        #expect(kept.reservations.first?.status == "confirmed")
    }

    @Test func aMarkerForAReservationAlreadyAnsweredChangesNothing() {
        let answered = shown([
            Self.accepted, ReservationConfirmed(reservationID: "R2", confirmationCode: "BK-7"),
            BookingOutcomeUnknown(reservationID: "R2", call: .booking, reason: "late"),
        ])
        #expect(answered.reservations.first?.status == "confirmed")
        #expect(answered.reservations.first?.detail == "code BK-7")
    }
}
