import BookingAdapter
import BookingServer
import TestSupport
import Testing

/// What every ``BookingService`` must do, run against the HTTP client talking to a real
/// booking server over loopback, and against the in-memory twin.
@Suite(.timeLimit(.minutes(1)))
struct BookingServiceContractTests {
    enum Case: String, CaseIterable, CustomTestStringConvertible {
        case http, inMemory
        var testDescription: String { rawValue }
    }

    /// Runs `body` with the service under test; the server, if any, stops afterwards.
    static func with(_ kind: Case, _ body: (any BookingService) async throws -> Void) async throws {
        switch kind {
        case .inMemory:
            try await body(InMemoryBookingService())
        case .http:
            let server = try await InProcessServer { onListening in
                var configuration = BookingServer.Configuration()
                configuration.port = 0
                return BookingServer(configuration: configuration).application(
                    logger: TestLogging.logger("booking"), onListening: onListening)
            }
            // Generous: the suite runs beside process-heavy tests on two cores.
            try await body(HTTPBookingService(baseURL: "http://127.0.0.1:\(server.port)", timeout: .seconds(30)))
            await server.stop()
        }
    }

    static func request(_ id: String = "r-1") -> BookingRequest {
        BookingRequest(
            reservationId: id, base: "EUR", quote: "USD", amount: "500.00", rate: "1.0832", quoteAmount: "541.60")
    }

    @Test(arguments: Case.allCases)
    func theSameKeyGetsTheSameConfirmation(_ kind: Case) async throws {
        try await Self.with(kind) { service in
            let first = try await service.book(Self.request(), idempotencyKey: "k-1")
            let again = try await service.book(Self.request(), idempotencyKey: "k-1")
            #expect(!first.isEmpty)
            #expect(again == first)
        }
    }

    @Test(arguments: Case.allCases)
    func aReservationIsNeverBookedTwiceEvenUnderAnotherKey(_ kind: Case) async throws {
        try await Self.with(kind) { service in
            let first = try await service.book(Self.request("r-7"), idempotencyKey: "k-1")
            let other = try await service.book(Self.request("r-7"), idempotencyKey: "k-2")
            let second = try await service.book(Self.request("r-8"), idempotencyKey: "k-3")
            #expect(other == first)
            #expect(second != first)
        }
    }

    @Test(arguments: Case.allCases)
    func aBookingIsCancelledOnceAndRepeatingTheKeyAnswersAsBefore(_ kind: Case) async throws {
        try await Self.with(kind) { service in
            _ = try await service.book(Self.request(), idempotencyKey: "k-1")
            try await service.cancel(reservationID: "r-1", idempotencyKey: "c-1")
            try await service.cancel(reservationID: "r-1", idempotencyKey: "c-1")
            await #expect(throws: BookingError.refused("reservation r-1 is already cancelled")) {
                try await service.cancel(reservationID: "r-1", idempotencyKey: "c-2")
            }
        }
    }

    @Test(arguments: Case.allCases)
    func cancellingAnUnknownReservationIsRefusedWithTheReason(_ kind: Case) async throws {
        try await Self.with(kind) { service in
            await #expect(throws: BookingError.refused("no booking for reservation nope")) {
                try await service.cancel(reservationID: "nope", idempotencyKey: "c-1")
            }
        }
    }

    @Test(arguments: Case.allCases)
    func anInvalidRequestIsRefusedNotRetried(_ kind: Case) async throws {
        try await Self.with(kind) { service in
            await #expect(throws: BookingError.refused("reservationId is empty")) {
                try await service.book(Self.request(""), idempotencyKey: "k-1")
            }
        }
    }

    @Test(arguments: Case.allCases)
    func aResolveAnswersWhatTheCallUnderTheKeyDid(_ kind: Case) async throws {
        try await Self.with(kind) { service in
            let code = try await service.book(Self.request(), idempotencyKey: "k-1")
            #expect(
                try await service.resolve(idempotencyKey: "k-1") == .done(confirmationCode: code, status: "confirmed"))
            try await service.cancel(reservationID: "r-1", idempotencyKey: "c-1")
            #expect(
                try await service.resolve(idempotencyKey: "c-1") == .done(confirmationCode: code, status: "cancelled"))
            // Asking again answers the same, and changes nothing.
            #expect(
                try await service.resolve(idempotencyKey: "k-1") == .done(confirmationCode: code, status: "confirmed"))
            #expect(try await service.book(Self.request(), idempotencyKey: "k-1") == code)
        }
    }

    @Test(arguments: Case.allCases)
    func aResolveThatFindsNothingClosesTheKeySoThatALateCallIsRefused(_ kind: Case) async throws {
        try await Self.with(kind) { service in
            let nothing = BookingResolution.nothingDone(
                "nothing was done under the Idempotency-Key k-1; it is closed: a call with it is refused")
            #expect(try await service.resolve(idempotencyKey: "k-1") == nothing)
            // The booking that was on its way arrives after the resolve: refused, nothing booked.
            await #expect(
                throws: BookingError.refused(
                    "a resolve found nothing done under the Idempotency-Key k-1 before this call came; it is refused")
            ) {
                try await service.book(Self.request(), idempotencyKey: "k-1")
            }
            #expect(try await service.resolve(idempotencyKey: "k-1") == nothing)
            // So is a cancellation under a closed key; other keys are not affected.
            let code = try await service.book(Self.request(), idempotencyKey: "k-2")
            _ = try await service.resolve(idempotencyKey: "c-1")
            await #expect(throws: BookingError.self) {
                try await service.cancel(reservationID: "r-1", idempotencyKey: "c-1")
            }
            #expect(
                try await service.resolve(idempotencyKey: "k-2") == .done(confirmationCode: code, status: "confirmed"))
        }
    }
}
