import BookingAdapter
import Foundation

/// The booking service kept in memory, with failures on request: the twin of
/// `HTTPBookingService` in the adapter's tests (a test target: fault injection is not shipped).
actor InMemoryBookingService: BookingService {
    /// What the twin does to a call (a book, cancel or resolve), one per call, in order.
    enum Fault: Sendable, Equatable {
        /// Answered as if the service were down (503), before anything happens.
        case unavailable
        /// Done, but the answer is lost: the call's outcome is unknown to the caller.
        case answerLost
        /// Lost on the way: nothing is done, and the outcome is unknown to the caller.
        case requestLost
        /// Slow on the way: the outcome is unknown to the caller, and the call arrives only
        /// when ``deliverHeld()`` is called (refused then if a resolve closed its key).
        case requestHeld
    }

    private(set) var bookings: [String: (code: String, cancelled: Bool)] = [:]
    private var answers: [String: String] = [:]
    /// Reservation ids by the key of the call that cancelled them.
    private var cancellations: [String: String] = [:]
    /// Keys a resolve found nothing done under.
    private var closed: Set<String> = []
    private var faults: [Fault]
    private var held: [(request: BookingRequest?, reservationID: String, key: String)] = []
    /// Book and cancel calls received.
    private(set) var calls = 0
    /// Resolve calls received.
    private(set) var resolves = 0
    /// Calls refused because a resolve had closed their key before they arrived.
    private(set) var refusedAfterResolve = 0

    /// - Parameters:
    ///   - failFirst: how many calls fail as if the service were down.
    ///   - faults: what happens to the calls after those, one each, in order.
    init(failFirst: Int = 0, faults: [Fault] = []) {
        self.faults = Array(repeating: .unavailable, count: failFirst) + faults
    }

    func book(_ request: BookingRequest, idempotencyKey: String) async throws(BookingError) -> String {
        calls += 1
        switch nextFault() {
        case .unavailable: throw .transient("HTTP 503")
        case .requestLost: throw .unknown("the request was lost (simulated)")
        case .requestHeld:
            held.append((request, request.reservationId, idempotencyKey))
            throw .unknown("timed out (simulated)")
        case .answerLost:
            _ = try doBook(request, key: idempotencyKey)
            throw .unknown("the answer was lost (simulated)")
        case nil:
            return try doBook(request, key: idempotencyKey)
        }
    }

    func cancel(reservationID: String, idempotencyKey: String) async throws(BookingError) {
        calls += 1
        switch nextFault() {
        case .unavailable: throw .transient("HTTP 503")
        case .requestLost: throw .unknown("the request was lost (simulated)")
        case .requestHeld:
            held.append((nil, reservationID, idempotencyKey))
            throw .unknown("timed out (simulated)")
        case .answerLost:
            try doCancel(reservationID, key: idempotencyKey)
            throw .unknown("the answer was lost (simulated)")
        case nil:
            try doCancel(reservationID, key: idempotencyKey)
        }
    }

    func resolve(idempotencyKey: String) async throws(BookingError) -> BookingResolution {
        resolves += 1
        switch nextFault() {
        case .unavailable: throw .transient("HTTP 503")
        case .requestLost, .requestHeld: throw .unknown("the request was lost (simulated)")
        case .answerLost:
            _ = doResolve(idempotencyKey)
            throw .unknown("the answer was lost (simulated)")
        case nil:
            return doResolve(idempotencyKey)
        }
    }

    /// Replaces the faults still to come.
    func setFaults(_ faults: [Fault]) {
        self.faults = faults
    }

    /// The held calls arrive now, in the order sent; returns how many were refused.
    @discardableResult
    func deliverHeld() -> Int {
        let arriving = held
        held = []
        var refused = 0
        for call in arriving {
            do throws(BookingError) {
                if let request = call.request {
                    _ = try doBook(request, key: call.key)
                } else {
                    try doCancel(call.reservationID, key: call.key)
                }
            } catch {
                refused += 1
            }
        }
        return refused
    }

    private func nextFault() -> Fault? {
        faults.isEmpty ? nil : faults.removeFirst()
    }

    private func doBook(_ request: BookingRequest, key: String) throws(BookingError) -> String {
        if let code = answers[key] { return code }
        try refuseIfClosed(key)
        guard !request.reservationId.isEmpty else { throw .refused("reservationId is empty") }
        if let existing = bookings[request.reservationId] {
            answers[key] = existing.code
            return existing.code
        }
        let code = "MEM-\(bookings.count + 1)"
        bookings[request.reservationId] = (code, false)
        answers[key] = code
        return code
    }

    private func doCancel(_ reservationID: String, key: String) throws(BookingError) {
        if cancellations[key] != nil { return }
        try refuseIfClosed(key)
        guard let booking = bookings[reservationID] else {
            throw .refused("no booking for reservation \(reservationID)")
        }
        guard !booking.cancelled else { throw .refused("reservation \(reservationID) is already cancelled") }
        bookings[reservationID]?.cancelled = true
        cancellations[key] = reservationID
    }

    private func doResolve(_ key: String) -> BookingResolution {
        if let code = answers[key] { return .done(confirmationCode: code, status: "confirmed") }
        if let id = cancellations[key], let booking = bookings[id] {
            return .done(confirmationCode: booking.code, status: "cancelled")
        }
        closed.insert(key)
        return .nothingDone(
            "nothing was done under the Idempotency-Key \(key); it is closed: a call with it is refused")
    }

    private func refuseIfClosed(_ key: String) throws(BookingError) {
        guard closed.contains(key) else { return }
        refusedAfterResolve += 1
        throw .refused(
            "a resolve found nothing done under the Idempotency-Key \(key) before this call came; it is refused")
    }
}
