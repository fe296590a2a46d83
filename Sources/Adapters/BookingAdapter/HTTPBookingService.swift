import AsyncHTTPClient
import Foundation
import Guards
import HTTPCalls
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
import Tracing

#if canImport(Glibc)
    import Glibc
#endif

/// Calls the booking API over HTTP with AsyncHTTPClient.
///
/// A call that fails before its request could be sent (no connection: a refused one is said
/// so, at once) is ``BookingError/transient(_:)``; one that times out, loses its connection, or gets an answer
/// it cannot read (over ``maxAnswerBytes``, or not the JSON the API answers) is
/// ``BookingError/unknown(_:)``: the service may have done it.
public struct HTTPBookingService: BookingService {
    public let baseURL: String
    public let timeout: Duration
    private let client: HTTPClient

    /// The largest answer read: a larger one leaves the call's outcome unknown.
    public static let maxAnswerBytes = 1 << 20

    public init(baseURL: String, timeout: Duration = .seconds(5), client: HTTPClient = HTTPCalls.client) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
        self.client = client
    }

    /// A booking as the API answers it.
    struct Record: Decodable {
        var confirmationCode: String
        var status: String
    }

    struct Problem: Decodable {
        var error: String
    }

    public func book(_ request: BookingRequest, idempotencyKey: String) async throws(BookingError) -> String {
        let encoded: Data
        do {
            encoded = try JSONEncoder().encode(request)
        } catch {
            // Not sent: this side's failure, not the service's refusal.
            throw .invalidRequest("the booking request could not be encoded: \(error)")
        }
        let (status, body) = try await call("POST", "/reservations", key: idempotencyKey, body: encoded)
        try Self.check(status, body)
        guard let record = try? JSONDecoder().decode(Record.self, from: body) else {
            throw .unknown("the booking service's answer has no confirmation code")
        }
        return record.confirmationCode
    }

    public func cancel(reservationID: String, idempotencyKey: String) async throws(BookingError) {
        let escaped = reservationID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? reservationID
        let (status, body) = try await call("POST", "/reservations/\(escaped)/cancel", key: idempotencyKey, body: nil)
        try Self.check(status, body)
    }

    public func resolve(idempotencyKey: String) async throws(BookingError) -> BookingResolution {
        let (status, body) = try await call("POST", "/resolve", key: idempotencyKey, body: nil)
        if status == 404 {
            guard let problem = try? JSONDecoder().decode(Problem.self, from: body) else {
                // A 404 without the API's body is not its answer (a proxy, a wrong URL): no verdict.
                throw .unknown("the booking service answered 404 to a resolve without saying why")
            }
            return .nothingDone(problem.error)
        }
        try Self.check(status, body)
        guard let record = try? JSONDecoder().decode(Record.self, from: body) else {
            throw .unknown("the booking service's answer to a resolve is not a booking")
        }
        return .done(confirmationCode: record.confirmationCode, status: record.status)
    }

    /// Throws unless `status` is a 2xx: refused for a 4xx (with the service's reason),
    /// transient for an answer that says nothing was done, unknown for any other.
    static func check(_ status: UInt, _ body: Data) throws(BookingError) {
        switch status {
        case 200..<300:
            return
        case 408, 429, 503:
            throw .transient("HTTP \(status)")
        case 400..<500:
            throw .refused((try? JSONDecoder().decode(Problem.self, from: body))?.error ?? "HTTP \(status)")
        default:
            throw .unknown("HTTP \(status)")
        }
    }

    /// Sends a request and returns the status and body of the answer.
    private func call(
        _ method: String, _ path: String, key: String, body: Data?
    ) async throws(BookingError) -> (UInt, Data) {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: "Idempotency-Key", value: key)
        request.headers.add(name: "Content-Type", value: "application/json")
        if let body { request.body = .bytes(ByteBuffer(data: body)) }
        let span = Self.startCallSpan(method, headers: &request.headers)
        defer { span?.end() }
        do {
            let response = try await client.execute(request, timeout: .milliseconds(timeout.inMilliseconds))
            span?.attributes.set("http.response.status_code", value: .int64(Int64(response.status.code)))
            var buffer = try await response.body.collect(upTo: Self.maxAnswerBytes)
            return (response.status.code, buffer.readData(length: buffer.readableBytes) ?? Data())
        } catch {
            let classified = classify(error)
            span?.setStatus(Self.spanStatus(of: classified))
            throw classified
        }
    }

    /// Whether a call that threw was never sent (safe to send again) or may have been done.
    func classify(_ error: any Error) -> BookingError {
        // Told at once (the client does not try the connection again until the deadline).
        if let address = HTTPCalls.refusedAddress(error, url: baseURL) {
            return .transient("connection refused: nothing listens at \(address)")
        }
        switch error {
        case let error as HTTPClientError where error == .connectTimeout:
            return .transient("unreachable: \(error)")
        case let error as HTTPClientError where error == .getConnectionFromPoolTimeout:
            // Queued in the client for a connection until the deadline: never sent.
            return .transient("no connection to the booking service was free within \(timeout.inMilliseconds) ms")
        case let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout:
            return .unknown("timed out after \(timeout.inMilliseconds) ms")
        case let error as HTTPClientError where error == .remoteConnectionClosed:
            return .unknown("the connection was closed before the answer came")
        case is NIOConnectionError, ChannelError.connectTimeout:
            return .transient("unreachable: \(error)")
        case let error as IOError where [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH].contains(error.errnoCode):
            return .transient("unreachable: \(error)")
        case is NIOTooManyBytesError:
            return .unknown("the answer is over \(Self.maxAnswerBytes) bytes")
        default:
            return .unknown("the call may have been done: \(error)")
        }
    }
}
