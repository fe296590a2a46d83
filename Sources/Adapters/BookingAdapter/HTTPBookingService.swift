import AsyncHTTPClient
import Foundation
import Guards
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

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
