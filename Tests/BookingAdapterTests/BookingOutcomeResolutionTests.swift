import BookingAdapter
import BookingServer
import BureauSchemas
import Bus
import BusTesting
import EventLog
import Foundation
import Guards
import ReservationsFeature
import Runtime
import TestSupport
import Testing

/// Unknown outcomes are resolved, never guessed: many reservations through the booking adapter
/// and the real booking server on loopback, whose calls are stalled past the adapter's
/// timeout, answered over its size limit, or cut after the request, as a seed draws them.
/// Afterwards, for every reservation, the status Bureau shows equals the service's state.
@Suite(.timeLimit(.minutes(3)))
struct BookingOutcomeResolutionTests {
    static let reservations = 64

    @Test func everyReservationsStatusEqualsTheServicesStateWhateverTheCallsMet() async throws {
        var configuration = BookingServer.Configuration()
        configuration.port = 0
        configuration.seed = 31
        configuration.failureRate = 0.05
        configuration.stallRate = 0.15
        // Far above the adapter's timeout: a call stalled before the work arrives after the
        // adapter has resolved it, and must then be refused.
        configuration.stall = .seconds(2)
        configuration.oversizeRate = 0.15
        configuration.cutRate = 0.15
        let booking = BookingServer(configuration: configuration)
        let server = try await InProcessServer { onListening in
            booking.application(logger: TestLogging.logger("booking"), onListening: onListening)
        }
        let service = HTTPBookingService(baseURL: "http://127.0.0.1:\(server.port)", timeout: .milliseconds(250))
        // Seeded ids: the idempotency keys, and so the faults each call meets, are the same every run.
        var generator = Xoshiro256(seed: 31)
        let ids = (0..<Self.reservations).map { _ in EventID.random(using: &generator) }
        let cancellationIDs = (0..<Self.reservations).map { _ in EventID.random(using: &generator) }
        let story = EventFilter(prefixes: ["bureau.reservations.", "bureau.booking."])

        // On the in-memory twin: what is at stake is the adapter and the service, not the transport.
        let (events, unknown) = try await BookingAdapterServiceTests.onBus { deployment in
            try await BookingAdapterServiceTests.withAdapter(service: service, on: deployment) {
                observer, statistics in
                for (index, id) in ids.enumerated() {
                    let accepted = BookingAdapterServiceTests.accepted(Self.id(index))
                    _ = try await observer.publish(try accepted.outgoing(id: id, module: "reservations"))
                }
                try #require(
                    await Timeout.result(within: .seconds(120)) {
                        await statistics.waitUntilCompleted(Self.reservations)
                    }
                        != nil, "not every booking has an outcome")
                // Then every other confirmed reservation is cancelled, through the same faults.
                let booked = try await observer.collect(
                    EventFilter(prefixes: [
                        Bureau_Booking_ReservationConfirmed.protoMessageName,
                        Bureau_Booking_ReservationFailed.protoMessageName,
                    ]), count: Self.reservations)
                let confirmed = try booked.compactMap {
                    try $0.payload(as: Bureau_Booking_ReservationConfirmed.self)?.reservationID
                }.sorted()
                let cancelled = confirmed.enumerated().filter { $0.offset.isMultiple(of: 2) }.map(\.element)
                for (index, reservation) in cancelled.enumerated() {
                    let cancellation = BookingAdapterServiceTests.cancellation(reservation)
                    _ = try await observer.publish(
                        try cancellation.outgoing(id: cancellationIDs[index], module: "reservations"))
                }
                let outcomes = Self.reservations + cancelled.count
                try #require(
                    await Timeout.result(within: .seconds(120)) { await statistics.waitUntilCompleted(outcomes) }
                        != nil,
                    "not every cancellation has an outcome")
                // Accepted events, outcomes and a marker for each unknown outcome.
                let total = outcomes * 2 + statistics.unknownOutcomes
                return (try await observer.collect(story, count: total), statistics.unknownOutcomes)
            }
        }
        // Stopping the server waits for the calls still stalled in it: those that arrive after
        // their key was resolved are refused now.
        await server.stop()
        let refusedLate = await booking.store.refusedAfterResolve
        let records = Dictionary(uniqueKeysWithValues: await booking.store.all().map { ($0.reservationId, $0) })

        // What Bureau shows: the reservations projection over the log.
        let projection = ReservationsProjection()
        var shown = projection.initialValue
        for event in events { try projection.apply(event, to: &shown) }
        let rows = Dictionary(uniqueKeysWithValues: shown.reservations.map { ($0.id, $0) })
        var mismatches: [String] = []
        for index in 0..<Self.reservations {
            let id = Self.id(index)
            let row = rows[id]
            let record = records[id]
            switch (row?.status, record?.status) {
            case ("confirmed", "confirmed"?), ("cancelled", "cancelled"?):
                if row?.code == record?.confirmationCode { continue }
            case ("failed", nil):
                continue
            default:
                break
            }
            mismatches.append(
                "\(id): Bureau shows \(row.map { "\($0.status) (\($0.detail))" } ?? "nothing"), the service holds "
                    + (record.map { "\($0.status) \($0.confirmationCode)" } ?? "nothing"))
        }
        print(
            "booking: \(Self.reservations) reservations, \(mismatches.count) mismatches "
                + "(\(unknown) unknown outcomes resolved, \(refusedLate) late calls refused)")
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        // Each reservation's booking has exactly one outcome in the log: nothing guessed twice.
        let bookingOutcomes = events.filter {
            [Bureau_Booking_ReservationConfirmed.protoMessageName, Bureau_Booking_ReservationFailed.protoMessageName]
                .contains($0.type)
        }
        #expect(bookingOutcomes.count == Self.reservations)
        // The faults were met: outcomes were unknown, and late calls were refused after a resolve.
        #expect(unknown > 0)
        #expect(refusedLate > 0)
    }

    static func id(_ index: Int) -> String { "R\(1000 + index)" }
}
