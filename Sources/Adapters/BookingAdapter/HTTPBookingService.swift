import Foundation
import Guards
import HTTPCalls
import Tracing

/// Calls the booking API over HTTP (``HTTPCalls``).
///
/// A call that fails before its request could be sent (no connection: a refused one is said
/// so, at once) is ``BookingError/transient(_:)``; one that times out, loses its connection, or gets an answer
/// it cannot read (over ``maxAnswerBytes``, or not the JSON the API answers) is
/// ``BookingError/unknown(_:)``: the service may have done it.
public struct HTTPBookingService: BookingService {
    public let baseURL: String
    public let timeout: Duration

    /// The largest answer read: a larger one leaves the call's outcome unknown.
    public static let maxAnswerBytes = 1 << 20

    public init(baseURL: String, timeout: Duration = .seconds(5)) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
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
        let record = try Self.decode(Record.self, from: body, "the booking service's answer has no confirmation code")
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
        let record = try Self.decode(
            Record.self, from: body, "the booking service's answer to a resolve is not a booking")
        return .done(confirmationCode: record.confirmationCode, status: record.status)
    }

    /// Decodes a 2xx answer. One that is not what the API says leaves the outcome unknown (the
    /// call may have been done): what the user reads names what was wrong and how the answer began.
    static func decode<Answer: Decodable>(
        _ type: Answer.Type, from body: Data, _ failure: String
    ) throws(BookingError) -> Answer {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch {
            let what = (error as? DecodingError)?.readable ?? "\(error)"
            let start = String(decoding: body.prefix(120), as: UTF8.self)
            throw .unknown("\(failure): \(what); it began \(start.debugDescription)")
        }
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
        var request = HTTPRequest(
            method: method, url: baseURL + path,
            headers: [("Idempotency-Key", key), ("Content-Type", "application/json")], body: body)
        let span = Self.startCallSpan(method, headers: &request.headers)
        defer { span?.end() }
        do throws(HTTPCallError) {
            let response = try await HTTPCalls.perform(request, timeout: timeout, bodyLimit: Self.maxAnswerBytes)
            span?.attributes.set("http.response.status_code", value: .int64(Int64(response.status)))
            return (UInt(clamping: response.status), response.body)
        } catch {
            let classified = classify(error)
            span?.setStatus(Self.spanStatus(of: classified))
            throw classified
        }
    }

    /// Whether a call that failed was never sent (safe to send again) or may have been done.
    func classify(_ error: HTTPCallError) -> BookingError {
        switch error {
        case .refused, .notConnected, .cannotStart:
            return .transient("\(error)")
        case .invalidURL:
            return .invalidRequest("\(error)")
        case .timedOut(let milliseconds):
            return .unknown("timed out after \(milliseconds) ms")
        case .tooLarge:
            return .unknown("the answer is over \(Self.maxAnswerBytes) bytes")
        case .interrupted:
            return .unknown("the connection was closed before the answer came: \(error)")
        case .cancelled:
            return .unknown("the call was cancelled after it may have been sent")
        }
    }
}
