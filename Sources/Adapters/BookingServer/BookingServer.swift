import Foundation
import Guards
import Hummingbird
import Logging

/// The embedded booking service: an HTTP JSON API on loopback, idempotent by key.
///
///     POST /reservations               book; header Idempotency-Key; body a ReservationRequest
///     POST /reservations/{id}/cancel   cancel; header Idempotency-Key
///     POST /resolve                    what the call under the Idempotency-Key did
///     GET  /reservations/{id}          read one
///     GET  /reservations               read all
///
/// A request repeated with the same Idempotency-Key gets the same answer and changes nothing
/// more. Invalid requests get a 4xx with `{"error": "…", "field": "…"}`.
///
/// A client that timed out, or lost its connection or could not read the answer, does not know
/// whether its call was done: it asks `POST /resolve` with the call's key. The
/// answer is the booking as the call was answered (200, the same body), or 404 when nothing was
/// done under the key; then the key is closed, so that the 404 stays true: a call with it that
/// arrives later (it was slow on its way) is refused with 409 and does nothing.
///
/// With a failure rate, that fraction of requests is answered 503 before anything happens (a
/// retry is safe); with stall, oversize and cut rates, that fraction of the calls that carry an
/// Idempotency-Key (create, cancel, resolve) leave the client without an answer it can read.
public struct BookingServer: Sendable {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var port = 8562
        /// How long the answer to a create, cancel or resolve is held back after it was handled;
        /// reads are prompt.
        public var latency: Duration = .zero
        /// 0…1: the share of requests answered 503 Service Unavailable before anything happens.
        public var failureRate = 0.0
        /// 0…1: the share of calls held back for ``stall``: half of them before the work (a
        /// request slow to arrive), half after it (an answer slow to come).
        public var stallRate = 0.0
        /// How long a stalled call is held: longer than a client's timeout, to leave the client
        /// not knowing what the call did.
        public var stall: Duration = .seconds(10)
        /// 0…1: the share of calls done and answered with a body of 2 MiB, over the booking
        /// adapter's limit of 1 MiB.
        public var oversizeRate = 0.0
        /// 0…1: the share of calls whose connection is closed without an answer once the request
        /// is read: half of them before the work, half after it.
        public var cutRate = 0.0
        /// The seed the faults are drawn from: the same seed gives a call (its idempotency key,
        /// and how many calls came with that key before) the same fault. Nil: a random seed.
        public var seed: UInt64?

        public init() {}

        /// Why the shares of calls given a fault cannot be used: they add up to more than 1.
        public var problem: String? {
            let total = failureRate + stallRate + oversizeRate + cutRate
            // A margin for the rounding of decimal fractions: 0.1 + 0.2 + 0.7 is 1.0000000000000002.
            guard total > 1 + 1e-9 else { return nil }
            return "the failure, stall, oversize and cut rates add up to \(String(format: "%g", total)); at most 1"
        }
    }

    public let configuration: Configuration
    public let store = BookingStore()

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    public func application(
        logger: Logger, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    )
        -> some ApplicationProtocol
    {
        let router = Router(context: BookingRequestContext.self)
        let store = self.store
        let configuration = self.configuration
        router.add(middleware: SimulationMiddleware(faults: SimulatedFaults(configuration)))
        router.post("/reservations") { request, context -> Response in
            guard let key = BookingServer.idempotencyKey(of: request) else {
                return BookingServer.problem(
                    .badRequest, "the Idempotency-Key header is missing", field: "Idempotency-Key")
            }
            let body = try await request.body.collect(upTo: 64 << 10)
            let booking: ReservationRequest
            do {
                booking = try JSONDecoder().decode(ReservationRequest.self, from: body)
            } catch let error as DecodingError {
                return BookingServer.problem(.badRequest, error.readable, field: error.field)
            }
            if let problem = booking.problem {
                return BookingServer.problem(.unprocessableContent, problem.message, field: problem.field)
            }
            switch await store.book(booking, key: key) {
            case .success(let (status, record)): return BookingServer.json(status, record)
            case .failure(let problem):
                return BookingServer.problem(problem.status, problem.message, field: problem.field)
            }
        }
        router.post("/resolve") { request, context -> Response in
            guard let key = BookingServer.idempotencyKey(of: request) else {
                return BookingServer.problem(
                    .badRequest, "the Idempotency-Key header is missing", field: "Idempotency-Key")
            }
            guard let record = await store.resolve(key) else {
                return BookingServer.problem(
                    .notFound,
                    "nothing was done under the Idempotency-Key \(key); it is closed: a call with it is refused",
                    field: "Idempotency-Key")
            }
            return BookingServer.json(.ok, record)
        }
        router.post("/reservations/{id}/cancel") { request, context -> Response in
            guard let key = BookingServer.idempotencyKey(of: request) else {
                return BookingServer.problem(
                    .badRequest, "the Idempotency-Key header is missing", field: "Idempotency-Key")
            }
            let id = context.parameters.get("id") ?? ""
            switch await store.cancel(id, key: key) {
            case .success(let record): return BookingServer.json(.ok, record)
            case .failure(let problem):
                return BookingServer.problem(problem.status, problem.message, field: problem.field)
            }
        }
        router.get("/reservations/{id}") { _, context -> Response in
            let id = context.parameters.get("id") ?? ""
            guard let record = await store.record(id) else {
                return BookingServer.problem(.notFound, "no booking for reservation \(id)", field: "id")
            }
            return BookingServer.json(.ok, record)
        }
        router.get("/reservations") { _, _ -> Response in
            BookingServer.json(.ok, await store.all())
        }
        router.get("/health") { _, _ in "ok" }
        return Application(
            router: router,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "bureau-booking"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// The Idempotency-Key header, if present and not empty.
    static func idempotencyKey(of request: Request) -> String? {
        request.headers.first { $0.name.canonicalName == "idempotency-key" }.map(\.value).flatMap {
            $0.isEmpty ? nil : $0
        }
    }

    static func json(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            // Not an empty object under `status`: a client would take it for the answer.
            return Response(
                status: .internalServerError, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"error":"the answer could not be encoded"}"#)))
        }
        return Response(
            status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: data))
        )
    }

    static func problem(_ status: HTTPResponse.Status, _ message: String, field: String?) -> Response {
        json(status, ProblemBody(error: message, field: field))
    }
}
