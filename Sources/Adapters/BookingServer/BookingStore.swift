import Foundation
import Hummingbird
import Logging

/// The bookings, the answers given per idempotency key, and the keys a resolve closed.
public actor BookingStore {
    private var records: [String: BookingRecord] = [:]
    private var answers: [String: (HTTPResponse.Status, BookingRecord)] = [:]
    private var cancellations: [String: BookingRecord] = [:]
    /// Keys a resolve found nothing done under: a call arriving with one later is refused.
    private var closed: Set<String> = []
    private var next = 1

    /// Calls refused because a resolve had closed their key before they arrived.
    public private(set) var refusedAfterResolve = 0

    public init() {}

    /// Why a call was not done.
    struct Problem: Error {
        let status: HTTPResponse.Status
        let message: String
        let field: String
    }

    /// Books, or answers as before for a key already seen. A reservation booked under another
    /// key is not booked twice; a key a resolve closed is refused.
    func book(_ request: ReservationRequest, key: String) -> Result<(HTTPResponse.Status, BookingRecord), Problem> {
        if let answer = answers[key] { return .success((.ok, answer.1)) }
        if let problem = refusal(ofClosed: key) { return .failure(problem) }
        if let existing = records[request.reservationId] {
            answers[key] = (.ok, existing)
            return .success((.ok, existing))
        }
        let record = BookingRecord(
            reservationId: request.reservationId, confirmationCode: String(format: "BK-%06d", next),
            status: "confirmed", request: request)
        next += 1
        records[request.reservationId] = record
        answers[key] = (.created, record)
        return .success((.created, record))
    }

    /// Cancels, or answers as before for a key already seen; a key a resolve closed is refused.
    func cancel(_ id: String, key: String) -> Result<BookingRecord, Problem> {
        if let answer = cancellations[key] { return .success(answer) }
        if let problem = refusal(ofClosed: key) { return .failure(problem) }
        guard var record = records[id] else {
            return .failure(Problem(status: .notFound, message: "no booking for reservation \(id)", field: "id"))
        }
        guard record.status == "confirmed" else {
            return .failure(
                Problem(status: .conflict, message: "reservation \(id) is already \(record.status)", field: "id"))
        }
        record.status = "cancelled"
        records[id] = record
        cancellations[key] = record
        return .success(record)
    }

    /// What the call under `key` did: the booking as it was answered, or nil when nothing was
    /// done under it, in which case the key is closed from now on, so that the answer stays
    /// true: a call still on its way with that key is refused when it arrives.
    func resolve(_ key: String) -> BookingRecord? {
        if let answer = answers[key] { return answer.1 }
        if let answer = cancellations[key] { return answer }
        closed.insert(key)
        return nil
    }

    private func refusal(ofClosed key: String) -> Problem? {
        guard closed.contains(key) else { return nil }
        refusedAfterResolve += 1
        return Problem(
            status: .conflict,
            message:
                "a resolve found nothing done under the Idempotency-Key \(key) before this call came; it is refused",
            field: "Idempotency-Key")
    }

    func record(_ id: String) -> BookingRecord? { records[id] }

    /// Every booking, by reservation id.
    public func all() -> [BookingRecord] { records.values.sorted { $0.reservationId < $1.reservationId } }
}
