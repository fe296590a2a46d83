import BookingAdapter
import Hummingbird
import TestSupport
import Testing

/// The HTTP client against a service whose 2xx answer is not what the API says: the call may
/// have been done, so its outcome is unknown, and what the user reads says what was wrong.
@Suite(.timeLimit(.minutes(1)))
struct HTTPBookingServiceAnswerTests {
    /// Runs `body` with a server that answers every call with `status` and `body`, and its URL.
    static func withServer(
        answering answer: String, _ body: (String) async throws -> Void
    ) async throws {
        let router = Router()
        router.post("/reservations") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: answer)))
        }
        let server = try await InProcessServer { onListening in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
                logger: TestLogging.logger("service"))
        }
        try await body("http://127.0.0.1:\(server.port)")
        await server.stop()
    }

    static func unknownReason(of url: String) async -> String? {
        let service = HTTPBookingService(baseURL: url, timeout: .seconds(10))
        return await HTTPBookingServiceFaultTests.unknownReason { () async throws(BookingError) in
            try await service.book(HTTPBookingServiceFaultTests.request("r-1"), idempotencyKey: "k-1")
        }
    }

    @Test func anAnswerWithoutAConfirmationCodeNamesTheMissingField() async throws {
        try await Self.withServer(answering: #"{"status":"confirmed"}"#) { url in
            #expect(
                await Self.unknownReason(of: url)
                    == #"the booking service's answer has no confirmation code: the field 'confirmationCode' is missing; it began "{\"status\":\"confirmed\"}""#
            )
        }
    }

    @Test func anAnswerThatIsNotJSONSaysSoAndHowItBegan() async throws {
        try await Self.withServer(answering: "<html>gateway</html>") { url in
            #expect(
                await Self.unknownReason(of: url)
                    == #"the booking service's answer has no confirmation code: the body is not JSON; it began "<html>gateway</html>""#
            )
        }
    }
}
