import BureauSchemas
import Bus
import BusTesting
import EventLog
import Foundation
import HTTPCalls
import Runtime
import TestSupport
import Testing
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// The booking adapter as a process, killed while the booking service is slow to answer.
@Suite(.timeLimit(.minutes(3)))
struct BookingAdapterCrashTests {
    /// The bookings the server holds, from GET /reservations.
    static func bookings(_ url: String) async throws -> [[String: Any]] {
        let response = try await HTTPCalls.perform(
            HTTPRequest(url: url + "/reservations"), timeout: .seconds(30), bodyLimit: 1 << 20)
        return try JSONSerialization.jsonObject(with: response.body) as? [[String: Any]] ?? []
    }

    @Test func killedDuringASlowCallItBooksOnceAndPublishesOneOutcomeAfterRestart() async throws {
        let directory = try TemporaryDirectory("booking-crash")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let server = try ChildProcess(
            BureauExecutable.path, ["serve", "booking", "--port", "0", "--latency", "10000"], directory: directory.path,
            name: "booking-server", readiness: true)
        defer { server.signal(SIGKILL) }
        let url = try await server.waitUntilReady()
        #expect(url.hasPrefix("http://127.0.0.1:"))

        func startAdapter(_ name: String) async throws -> ChildProcess {
            let adapter = try ChildProcess(
                BureauExecutable.path,
                [
                    "run", "booking-adapter", "--data", bus.location.dataDirectory, "--set", "booking-url=\(url)",
                    // Longer than the server's delay, so that the call waits for the answer.
                    "--set", "timeout-ms=30000",
                ],
                directory: directory.path, name: name, readiness: true)
            do {
                try await adapter.waitUntilReady()
            } catch {
                adapter.signal(SIGKILL)
                throw error
            }
            return adapter
        }
        let first = try await startAdapter("adapter1")
        let client = try ZeroMQBusClient(
            location: bus.location, options: .init(process: "test"), logger: TestLogging.logger("test"))
        defer { client.close() }
        _ = try await client.publish(
            try Emitted(ReservationFixtures.accepted("r-1")).outgoing(id: .random(), module: "reservations"))

        // The server books at once and holds its answer back for 10 s (a margin for a loaded
        // machine): kill the adapter in between. Polled, bounded: the server is another process
        // (the adapter's real peer), and neither it nor its in-process form (whose store is an
        // actor without a notification) nor the adapter's log says when a booking is made.
        var booked: [[String: Any]] = []
        for _ in 0..<200 where booked.isEmpty {
            booked = try await Self.bookings(url)
            if booked.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(booked.count == 1)
        first.signal(SIGKILL)
        _ = await first.exitStatus()
        let outcomes = EventFilter(prefixes: ["bureau.booking."])
        // The adapter is dead: the log up to its head holds whatever it published.
        let before = try await client.eventsUpToHead(outcomes)
        #expect(before.isEmpty, "the adapter was killed before it heard the answer")

        let second = try await startAdapter("adapter2")
        defer { second.signal(SIGKILL) }
        let after = try await client.collect(outcomes, count: 1)
        let confirmed = try #require(try after.first?.payload(as: Bureau_Booking_ReservationConfirmed.self))
        #expect(confirmed.reservationID == "r-1")
        let onServer = try await Self.bookings(url)
        #expect(onServer.count == 1)
        #expect(onServer.first?["confirmationCode"] as? String == confirmed.confirmationCode)

        // Stop cleanly; the log holds exactly one outcome for the reservation.
        second.signal(SIGTERM)
        #expect(await second.exitCode() == 0)
        await bus.stop()
        let events = try bus.records().map { try StoredEvent(envelopeBytes: $0.body) }
        #expect(events.filter { $0.type.hasPrefix("bureau.booking.") }.count == 1)
    }
}
