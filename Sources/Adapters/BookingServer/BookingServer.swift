import Foundation
import Hummingbird
import Logging

/// The embedded booking service: an HTTP JSON API on loopback, idempotent by key.
///
///     POST /reservations               book; header Idempotency-Key; body a ReservationRequest
///     POST /reservations/{id}/cancel   cancel; header Idempotency-Key
///     GET  /reservations/{id}          read one
///     GET  /reservations               read all
///
/// A request repeated with the same Idempotency-Key gets the same answer and changes nothing
/// more. Invalid requests get a 4xx with `{"error": "…", "field": "…"}`. With a failure rate,
/// that fraction of requests is answered 503 before anything happens (a retry is safe).
public struct BookingServer: Sendable {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var port = 8562
        /// How long the answer to a create or cancel is held back after it was handled; reads are prompt.
        public var latency: Duration = .zero
        /// 0…1: the share of requests answered 503 Service Unavailable.
        public var failureRate = 0.0

        public init() {}
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
        let router = Router()
        let store = self.store
        let configuration = self.configuration
        router.add(
            middleware: SimulationMiddleware(latency: configuration.latency, failureRate: configuration.failureRate))
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
            let (status, record) = await store.book(booking, key: key)
            return BookingServer.json(status, record)
        }
        router.post("/reservations/{id}/cancel") { request, context -> Response in
            guard let key = BookingServer.idempotencyKey(of: request) else {
                return BookingServer.problem(
                    .badRequest, "the Idempotency-Key header is missing", field: "Idempotency-Key")
            }
            let id = context.parameters.get("id") ?? ""
            switch await store.cancel(id, key: key) {
            case .success(let record): return BookingServer.json(.ok, record)
            case .failure(let problem): return BookingServer.problem(problem.status, problem.message, field: "id")
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
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: data))
        )
    }

    static func problem(_ status: HTTPResponse.Status, _ message: String, field: String?) -> Response {
        json(status, ProblemBody(error: message, field: field))
    }
}

/// What a client sends to book.
public struct ReservationRequest: Codable, Sendable, Equatable {
    public var reservationId: String
    public var base: String
    public var quote: String
    public var amount: String
    public var rate: String
    public var quoteAmount: String

    public init(reservationId: String, base: String, quote: String, amount: String, rate: String, quoteAmount: String) {
        self.reservationId = reservationId
        self.base = base
        self.quote = quote
        self.amount = amount
        self.rate = rate
        self.quoteAmount = quoteAmount
    }

    /// The first field that is not acceptable, and why.
    var problem: (field: String, message: String)? {
        if reservationId.isEmpty { return ("reservationId", "reservationId is empty") }
        for (field, value) in [("base", base), ("quote", quote)]
        where value.count != 3 || !value.allSatisfy({ $0.isUppercase && $0.isLetter }) {
            return (field, "\(field) '\(value)' is not a three-letter currency code")
        }
        for (field, value) in [("amount", amount), ("rate", rate), ("quoteAmount", quoteAmount)] {
            guard let number = Decimal(string: value, locale: Locale(identifier: "en_US_POSIX")), number > 0,
                value.allSatisfy({ $0.isNumber || $0 == "." })
            else { return (field, "\(field) '\(value)' is not a positive decimal") }
        }
        return nil
    }
}

/// A booking as the service keeps it.
public struct BookingRecord: Codable, Sendable, Equatable {
    public var reservationId: String
    public var confirmationCode: String
    public var status: String
    public var request: ReservationRequest
}

struct ProblemBody: Codable {
    var error: String
    var field: String?
}

/// The bookings and the answers given per idempotency key.
public actor BookingStore {
    private var records: [String: BookingRecord] = [:]
    private var answers: [String: (HTTPResponse.Status, BookingRecord)] = [:]
    private var cancellations: [String: BookingRecord] = [:]
    private var next = 1

    public init() {}

    /// Books, or answers as before for a key already seen. A reservation booked under another
    /// key is not booked twice.
    func book(_ request: ReservationRequest, key: String) -> (HTTPResponse.Status, BookingRecord) {
        if let answer = answers[key] { return (.ok, answer.1) }
        if let existing = records[request.reservationId] {
            answers[key] = (.ok, existing)
            return (.ok, existing)
        }
        let record = BookingRecord(
            reservationId: request.reservationId, confirmationCode: String(format: "BK-%06d", next),
            status: "confirmed", request: request)
        next += 1
        records[request.reservationId] = record
        answers[key] = (.created, record)
        return (.created, record)
    }

    struct CancelProblem: Error {
        let status: HTTPResponse.Status
        let message: String
    }

    func cancel(_ id: String, key: String) -> Result<BookingRecord, CancelProblem> {
        if let answer = cancellations[key] { return .success(answer) }
        guard var record = records[id] else {
            return .failure(CancelProblem(status: .notFound, message: "no booking for reservation \(id)"))
        }
        guard record.status == "confirmed" else {
            return .failure(CancelProblem(status: .conflict, message: "reservation \(id) is already \(record.status)"))
        }
        record.status = "cancelled"
        records[id] = record
        cancellations[key] = record
        return .success(record)
    }

    func record(_ id: String) -> BookingRecord? { records[id] }

    /// Every booking, by reservation id.
    public func all() -> [BookingRecord] { records.values.sorted { $0.reservationId < $1.reservationId } }
}

/// Latency and failures on purpose, for the deployment to feel like a remote service.
struct SimulationMiddleware<Context: RequestContext>: RouterMiddleware {
    let latency: Duration
    let failureRate: Double

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws
        -> Response
    {
        if failureRate > 0, Double.random(in: 0..<1) < failureRate, request.uri.path != "/health" {
            return BookingServer.problem(
                .serviceUnavailable, "the booking service is unavailable (simulated)", field: nil)
        }
        let response = try await next(request, context)
        // The work is done before the wait: a client that gives up or dies meanwhile has booked
        // without hearing so, the case idempotency keys exist for.
        if latency > .zero, request.method == .post { try await Task.sleep(for: latency) }
        return response
    }
}

extension DecodingError {
    var field: String? {
        switch self {
        case .keyNotFound(let key, _): key.stringValue
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            context.codingPath.last?.stringValue
        @unknown default: nil
        }
    }

    var readable: String {
        switch self {
        case .keyNotFound(let key, _): "the field '\(key.stringValue)' is missing"
        case .typeMismatch(_, let context):
            "the field '\(context.codingPath.last?.stringValue ?? "?")' has the wrong type"
        case .valueNotFound(_, let context): "the field '\(context.codingPath.last?.stringValue ?? "?")' is null"
        case .dataCorrupted(let context):
            context.codingPath.isEmpty
                ? "the body is not JSON" : "the field '\(context.codingPath.last?.stringValue ?? "?")' is malformed"
        @unknown default: "the body is not a reservation"
        }
    }
}
