import AsyncHTTPClient
import Foundation
import Guards
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

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
