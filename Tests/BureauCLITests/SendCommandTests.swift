import Bus
import EventLog
import Foundation
import InMemoryBus
import ReservationsFeature
import Runtime
import Testing

@testable import BureauCLI

/// `bureau send --outcome`: the answer, then the outcome after it, however they arrive.
@Suite(.timeLimit(.minutes(1)))
struct SendCommandTests {
    static let reserve = "bureau://reservations/reserve?base=EUR&quote=USD&amount=500.00&rate=1.1554"

    @Test func aReservationsAnswerAndThenItsOutcomeAreFound() async throws {
        // Given a bus on which a module answers a reservation and its booking is confirmed
        let bus = InMemoryBus()
        let route = try Composition.registry().router.route(Self.reserve)
        let requests = bus.subscribe(EventFilter(prefixes: [route.request.type]), after: 0)
        let module = Task {
            for try await request in requests.events {
                _ = try await bus.publish([
                    try OutgoingEvent(ReservationAcceptedV2(), correlation: request.id),
                    try OutgoingEvent(ReservationConfirmed(), correlation: request.id),
                ])
                return
            }
        }
        defer { module.cancel() }

        // When the reservation is sent and, once it is answered, its outcome awaited
        let (request, answers, answer) = try await SendCommand.send(route, through: bus, until: .now + .seconds(10))
        let classifier = AnswerClassifier(route.command)
        let outcome = try await answers.first(until: .now + .seconds(5)) { event in
            classifier.verdict(of: event, answering: request.id)?.isAnswer == false
        }

        // Then both are found
        #expect(answer?.type == ReservationAcceptedV2.protoMessageName)
        #expect(outcome?.type == ReservationConfirmed.protoMessageName)
    }

    @Test func anOutcomeThatArrivedWithItsAnswerIsFoundAfterIt() async throws {
        // Given an answer and its outcome that reached the sender before it looked, so that they
        // are taken from the subscription in one batch
        let bus = InMemoryBus()
        let answers = AnswerStream(
            bus.subscribe(
                EventFilter(prefixes: [ReservationAcceptedV2.protoMessageName, ReservationConfirmed.protoMessageName]),
                after: 0))
        let request = EventID.random()
        _ = try await bus.publish([
            try OutgoingEvent(ReservationAcceptedV2(), correlation: request),
            try OutgoingEvent(ReservationConfirmed(), correlation: request),
        ])

        // When the answer is looked for, and then the outcome
        let answer = try await answers.first(until: .now + .seconds(5)) {
            $0.type == ReservationAcceptedV2.protoMessageName
        }
        let outcome = try await answers.first(until: .now + .seconds(5)) {
            $0.type == ReservationConfirmed.protoMessageName
        }

        // Then the outcome was not lost with the batch that held the answer
        #expect(answer?.correlation == request)
        #expect(outcome?.correlation == request)
    }
}
