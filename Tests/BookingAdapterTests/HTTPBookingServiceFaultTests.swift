import BookingAdapter
import BookingServer
import Guards
import TestServers
import TestSupport
import Testing

/// The HTTP client against the booking server's simulated faults, on loopback: which leave a
/// call's outcome unknown (the service may have done it), and which are safe to send again.
@Suite(.timeLimit(.minutes(2)))
struct HTTPBookingServiceFaultTests {
    /// Runs `body` with a server configured by `configure` (seed 7) and its URL; stops it after.
    static func withServer(
        _ configure: (inout BookingServer.Configuration) -> Void,
        _ body: (BookingServer, String) async throws -> Void
    ) async throws {
        var configuration = BookingServer.Configuration()
        configuration.port = 0
        configuration.seed = 7
        configure(&configuration)
        let booking = BookingServer(configuration: configuration)
        let server = try await InProcessServer { onListening in
            booking.application(logger: TestLogging.logger("booking"), onListening: onListening)
        }
        try await body(booking, "http://127.0.0.1:\(server.port)")
        await server.stop()
    }

    static func request(_ id: String) -> BookingRequest {
        BookingServiceContractTests.request(id)
    }

    /// The reason of the unknown outcome `call` ends with; nil (and an issue) if it ends otherwise.
    static func unknownReason(_ call: () async throws(BookingError) -> String) async -> String? {
        do {
            let code = try await call()
            Issue.record("the call was answered: \(code)")
        } catch {
            guard case .unknown(let reason) = error else {
                Issue.record("not an unknown outcome: \(error)")
                return nil
            }
            return reason
        }
        return nil
    }

    @Test func anAnswerOverTheSizeLimitLeavesTheOutcomeUnknownThoughTheBookingWasMade() async throws {
        try await Self.withServer({ $0.oversizeRate = 1 }) { booking, url in
            let service = HTTPBookingService(baseURL: url, timeout: .seconds(30))
            let reason = await Self.unknownReason { () async throws(BookingError) in
                try await service.book(Self.request("r-1"), idempotencyKey: "k-1")
            }
            #expect(reason == "the answer is over 1048576 bytes")
            #expect(await booking.store.all().map(\.reservationId) == ["r-1"])
        }
    }

    @Test func aCallHeldPastTheTimeoutIsUnknownNotFailed() async throws {
        try await Self.withServer({
            $0.stallRate = 1
            $0.stall = .seconds(1)
        }) { _, url in
            let service = HTTPBookingService(baseURL: url, timeout: .milliseconds(200))
            let reason = await Self.unknownReason { () async throws(BookingError) in
                try await service.book(Self.request("r-1"), idempotencyKey: "k-1")
            }
            #expect(reason == "timed out after 200 ms")
        }
    }

    @Test func aConnectionCutAfterTheRequestLeavesTheOutcomeUnknownWhetherOrNotTheWorkWasDone() async throws {
        // The same seed cuts the same calls before or after the work: twice, the same bookings.
        var booked: [[String]] = []
        for _ in 0..<2 {
            try await Self.withServer({ $0.cutRate = 1 }) { booking, url in
                let service = HTTPBookingService(baseURL: url, timeout: .seconds(30))
                for index in 0..<8 {
                    let reason = await Self.unknownReason { () async throws(BookingError) in
                        try await service.book(Self.request("r-\(index)"), idempotencyKey: "k-\(index)")
                    }
                    #expect(reason != nil)
                }
                booked.append(await booking.store.all().map(\.reservationId))
            }
        }
        #expect(booked[0] == booked[1])
        #expect(!booked[0].isEmpty && booked[0].count < 8, "cut after the work: \(booked[0])")
    }

    @Test func aServiceThatAnswers503OrCannotBeReachedDidNothingAndMayBeCalledAgain() async throws {
        try await Self.withServer({ $0.failureRate = 1 }) { booking, url in
            let service = HTTPBookingService(baseURL: url, timeout: .seconds(30))
            await #expect(throws: BookingError.transient("HTTP 503")) {
                try await service.book(Self.request("r-1"), idempotencyKey: "k-1")
            }
            #expect(await booking.store.all().isEmpty)
        }
        // A port nothing listens on, from a range the system never hands a server asking for
        // any port (a port just freed by a stopped server could be taken by another test's),
        // and one the client holds no connection to (a pooled one the server closed would be
        // reset after the request went out: an unknown outcome). The request is never sent, and
        // the refusal is the answer, told at once: the call's timeout is a minute and the test
        // waits 20 s, so a refusal told only at the timeout cannot pass.
        let port = try TCPPorts.free()
        let service = HTTPBookingService(baseURL: "http://127.0.0.1:\(port)", timeout: .seconds(60))
        let outcome = await Timeout.result(within: .seconds(20)) { () async -> BookingError? in
            do throws(BookingError) {
                _ = try await service.book(Self.request("r-1"), idempotencyKey: "k-1")
                return nil
            } catch {
                return error
            }
        }
        #expect(
            outcome == .some(.transient("connection refused: nothing listens at 127.0.0.1:\(port)")),
            "\(String(describing: outcome))")
    }
}
