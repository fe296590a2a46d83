import BureauSchemas
import Bus
import EventLog
import Runtime
import Testing

/// The one reading of a command's answers: accepted, rejected, or a later outcome, and only
/// for events correlated with the request.
struct AnswerClassifierTests {
    /// A reservation: answered accepted or rejected, then an outcome that succeeds or fails.
    static let reserve = CommandSpec(
        module: "reservations", name: "reserve", summary: "", parameters: [],
        answers: ["bureau.reservations.ReservationAccepted", "bureau.reservations.ReservationRejected"],
        rejections: ["bureau.reservations.ReservationRejected"],
        outcomes: ["bureau.booking.ReservationConfirmed", "bureau.booking.ReservationFailed"],
        failedOutcomes: ["bureau.booking.ReservationFailed"]
    ) { _ throws(CommandError) in Emitted(Bureau_Reservations_ReservationRequested()) }

    let classifier = AnswerClassifier(Self.reserve)

    static func event(_ type: String, correlation: EventID) -> StoredEvent {
        StoredEvent(
            position: 1, id: .random(), type: type, commitTime: CommitTime(seconds: 0, nanos: 0),
            correlation: correlation, payload: .init())
    }

    @Test func eachTypeHasItsVerdict() {
        #expect(classifier.verdict(type: "bureau.reservations.ReservationAccepted") == .accepted)
        #expect(classifier.verdict(type: "bureau.reservations.ReservationRejected") == .rejected)
        #expect(classifier.verdict(type: "bureau.booking.ReservationConfirmed") == .outcome(succeeded: true))
        #expect(classifier.verdict(type: "bureau.booking.ReservationFailed") == .outcome(succeeded: false))
        #expect(classifier.verdict(type: "bureau.watchlist.PairAdded") == nil)
    }

    @Test func answersAndFailuresAreToldApart() {
        #expect(AnswerClassifier.Verdict.accepted.isAnswer && !AnswerClassifier.Verdict.accepted.isFailure)
        #expect(AnswerClassifier.Verdict.rejected.isAnswer && AnswerClassifier.Verdict.rejected.isFailure)
        #expect(!AnswerClassifier.Verdict.outcome(succeeded: true).isAnswer)
        #expect(!AnswerClassifier.Verdict.outcome(succeeded: true).isFailure)
        #expect(AnswerClassifier.Verdict.outcome(succeeded: false).isFailure)
    }

    @Test func onlyAnEventCorrelatedWithTheRequestAnswersIt() {
        let request = EventID.random()
        let accepted = "bureau.reservations.ReservationAccepted"
        #expect(classifier.verdict(of: Self.event(accepted, correlation: request), answering: request) == .accepted)
        #expect(classifier.verdict(of: Self.event(accepted, correlation: .random()), answering: request) == nil)
        #expect(classifier.verdict(of: Self.event(accepted, correlation: .zero), answering: request) == nil)
    }

    @Test func theTypesToSubscribeToAreTheAnswersAndTheOutcomes() {
        #expect(
            classifier.types == [
                "bureau.reservations.ReservationAccepted", "bureau.reservations.ReservationRejected",
                "bureau.booking.ReservationConfirmed", "bureau.booking.ReservationFailed",
            ])
        #expect(classifier.answerTypes.count == 2 && classifier.outcomeTypes.count == 2)
    }
}
