import Foundation
import Hummingbird
import Logging

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
