import AsyncHTTPClient
import Foundation
import Guards
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A reservation as the booking service takes it.
public struct BookingRequest: Codable, Sendable, Equatable {
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
}

/// Why a booking call failed.
public enum BookingError: Error, Equatable, CustomStringConvertible {
    /// Worth retrying: a 5xx, a timeout, no connection.
    case transient(String)
    /// Not worth retrying: the service refused the request (a 4xx), with its reason.
    case refused(String)

    public var description: String {
        switch self {
        case .transient(let reason): reason
        case .refused(let reason): reason
        }
    }
}

/// The booking service as the adapter sees it: the seam between the adapter and the network.
///
/// ``HTTPBookingService`` calls the HTTP API; ``InMemoryBookingService`` is its twin for
/// tests; one contract suite runs against both. Calls carry an idempotency key: repeating a
/// call with the same key never books or cancels twice.
public protocol BookingService: Sendable {
    /// Books; returns the confirmation code.
    func book(_ request: BookingRequest, idempotencyKey: String) async throws(BookingError) -> String
    /// Cancels a booked reservation.
    func cancel(reservationID: String, idempotencyKey: String) async throws(BookingError)
}

/// Calls the booking API over HTTP with AsyncHTTPClient.
public struct HTTPBookingService: BookingService {
    public let baseURL: String
    public let timeout: Duration
    private let client: HTTPClient

    public init(baseURL: String, timeout: Duration = .seconds(5), client: HTTPClient = .shared) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
        self.client = client
    }

    struct Confirmation: Decodable {
        var confirmationCode: String
    }

    struct Problem: Decodable {
        var error: String
    }

    public func book(_ request: BookingRequest, idempotencyKey: String) async throws(BookingError) -> String {
        let body = try await call(
            "POST", "/reservations", key: idempotencyKey, body: try? JSONEncoder().encode(request))
        guard let confirmation = try? JSONDecoder().decode(Confirmation.self, from: body) else {
            throw .transient("the booking service answered without a confirmation code")
        }
        return confirmation.confirmationCode
    }

    public func cancel(reservationID: String, idempotencyKey: String) async throws(BookingError) {
        let escaped = reservationID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? reservationID
        _ = try await call("POST", "/reservations/\(escaped)/cancel", key: idempotencyKey, body: nil)
    }

    /// Sends a request and returns the body of a 2xx answer.
    private func call(_ method: String, _ path: String, key: String, body: Data?) async throws(BookingError) -> Data {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: "Idempotency-Key", value: key)
        request.headers.add(name: "Content-Type", value: "application/json")
        if let body { request.body = .bytes(ByteBuffer(data: body)) }
        do {
            let response = try await client.execute(request, timeout: .milliseconds(timeout.inMilliseconds))
            var buffer = try await response.body.collect(upTo: 1 << 20)
            let data = buffer.readData(length: buffer.readableBytes) ?? Data()
            switch response.status.code {
            case 200..<300: return data
            case 400..<500 where response.status != .requestTimeout && response.status != .tooManyRequests:
                let reason =
                    (try? JSONDecoder().decode(Problem.self, from: data))?.error ?? "HTTP \(response.status.code)"
                throw BookingError.refused(reason)
            default:
                throw BookingError.transient("HTTP \(response.status.code)")
            }
        } catch let error as BookingError {
            throw error
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw .transient("timed out after \(timeout.inMilliseconds) ms")
        } catch {
            throw .transient("unreachable: \(error)")
        }
    }
}

/// The booking service kept in memory, with failures on request. For tests.
public actor InMemoryBookingService: BookingService {
    public private(set) var bookings: [String: (code: String, cancelled: Bool)] = [:]
    private var answers: [String: String] = [:]
    private var cancelled: Set<String> = []
    private var transientFailures: Int
    public private(set) var calls = 0

    /// - Parameter failFirst: how many calls fail as if the service were down.
    public init(failFirst: Int = 0) {
        transientFailures = failFirst
    }

    public func book(_ request: BookingRequest, idempotencyKey: String) async throws(BookingError) -> String {
        calls += 1
        if transientFailures > 0 {
            transientFailures -= 1
            throw .transient("HTTP 503")
        }
        if let code = answers[idempotencyKey] { return code }
        guard !request.reservationId.isEmpty else { throw .refused("reservationId is empty") }
        if let existing = bookings[request.reservationId] { return existing.code }
        let code = "MEM-\(bookings.count + 1)"
        bookings[request.reservationId] = (code, false)
        answers[idempotencyKey] = code
        return code
    }

    public func cancel(reservationID: String, idempotencyKey: String) async throws(BookingError) {
        calls += 1
        if transientFailures > 0 {
            transientFailures -= 1
            throw .transient("HTTP 503")
        }
        if cancelled.contains(idempotencyKey) { return }
        guard let booking = bookings[reservationID] else {
            throw .refused("no booking for reservation \(reservationID)")
        }
        guard !booking.cancelled else { throw .refused("reservation \(reservationID) is already cancelled") }
        bookings[reservationID]?.cancelled = true
        cancelled.insert(idempotencyKey)
    }
}
