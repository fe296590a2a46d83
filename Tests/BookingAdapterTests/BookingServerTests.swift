import BookingServer
import BusTesting
import Foundation
import HTTPCalls
import TestSupport
import Testing

/// The booking API over loopback: answers, idempotency, and the 4xx bodies that say what is wrong.
@Suite(.timeLimit(.minutes(1)))
struct BookingServerTests {
    struct Answer {
        var status: UInt
        var json: [String: Any]
    }

    static func withServer(failureRate: Double = 0, _ body: (String) async throws -> Void) async throws {
        let server = try await InProcessServer { onListening in
            var configuration = BookingServer.Configuration()
            configuration.port = 0
            configuration.failureRate = failureRate
            return BookingServer(configuration: configuration).application(
                logger: TestLogging.logger("booking"), onListening: onListening)
        }
        try await body("http://127.0.0.1:\(server.port)")
        await server.stop()
    }

    static func call(
        _ method: String, _ url: String, key: String? = nil, body: String? = nil
    ) async throws -> Answer {
        var request = HTTPRequest(method: method, url: url, body: body.map { Data($0.utf8) })
        if let key { request.headers.append(("Idempotency-Key", key)) }
        let response = try await HTTPCalls.perform(request, timeout: .seconds(30), bodyLimit: 1 << 20)
        return Answer(
            status: UInt(clamping: response.status),
            json: (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:]
        )
    }

    static let valid =
        #"{"reservationId":"r-1","base":"EUR","quote":"USD","amount":"500.00","rate":"1.0832","quoteAmount":"541.60"}"#

    @Test func aBookingIsCreatedOnceAndTheSameKeyGetsTheSameAnswer() async throws {
        try await Self.withServer { url in
            let first = try await Self.call("POST", url + "/reservations", key: "k", body: Self.valid)
            let again = try await Self.call("POST", url + "/reservations", key: "k", body: Self.valid)
            #expect(first.status == 201)
            #expect(again.status == 200)
            #expect(first.json["confirmationCode"] as? String == "BK-000001")
            #expect(again.json["confirmationCode"] as? String == "BK-000001")
            let read = try await Self.call("GET", url + "/reservations/r-1")
            #expect(read.json["status"] as? String == "confirmed")
        }
    }

    @Test func aMissingIdempotencyKeyIsABadRequestNamingTheHeader() async throws {
        try await Self.withServer { url in
            let answer = try await Self.call("POST", url + "/reservations", body: Self.valid)
            #expect(answer.status == 400)
            #expect(answer.json["field"] as? String == "Idempotency-Key")
        }
    }

    @Test func malformedJSONAndMissingFieldsAreBadRequests() async throws {
        try await Self.withServer { url in
            let garbage = try await Self.call("POST", url + "/reservations", key: "k", body: "{not json")
            #expect(garbage.status == 400)
            #expect((garbage.json["error"] as? String)?.isEmpty == false)
            let missing = try await Self.call("POST", url + "/reservations", key: "k", body: #"{"reservationId":"r"}"#)
            #expect(missing.status == 400)
            #expect(missing.json["error"] as? String == "the field 'base' is missing")
            #expect(missing.json["field"] as? String == "base")
        }
    }

    @Test func invalidValuesAreUnprocessableNamingTheField() async throws {
        try await Self.withServer { url in
            let badCurrency = Self.valid.replacingOccurrences(of: #""USD""#, with: #""usd""#)
            let currency = try await Self.call("POST", url + "/reservations", key: "k1", body: badCurrency)
            #expect(currency.status == 422)
            #expect(currency.json["field"] as? String == "quote")
            let negative = Self.valid.replacingOccurrences(of: #""500.00""#, with: #""-5""#)
            let amount = try await Self.call("POST", url + "/reservations", key: "k2", body: negative)
            #expect(amount.status == 422)
            #expect(amount.json["error"] as? String == "amount '-5' is not a positive decimal")
        }
    }

    @Test func cancellingTwiceOrCancellingWhatIsUnknownIsRefused() async throws {
        try await Self.withServer { url in
            _ = try await Self.call("POST", url + "/reservations", key: "k", body: Self.valid)
            let cancelled = try await Self.call("POST", url + "/reservations/r-1/cancel", key: "c1")
            #expect(cancelled.status == 200)
            #expect(cancelled.json["status"] as? String == "cancelled")
            let twice = try await Self.call("POST", url + "/reservations/r-1/cancel", key: "c2")
            #expect(twice.status == 409)
            let unknown = try await Self.call("POST", url + "/reservations/nope/cancel", key: "c3")
            #expect(unknown.status == 404)
            #expect(unknown.json["error"] as? String == "no booking for reservation nope")
        }
    }

    @Test func aResolveAnswersTheBookingOr404AndThenALateCallWithTheKeyGets409() async throws {
        try await Self.withServer { url in
            let booked = try await Self.call("POST", url + "/reservations", key: "k", body: Self.valid)
            let resolved = try await Self.call("POST", url + "/resolve", key: "k")
            #expect(resolved.status == 200)
            #expect(resolved.json["confirmationCode"] as? String == booked.json["confirmationCode"] as? String)
            #expect(resolved.json["status"] as? String == "confirmed")
            let nothing = try await Self.call("POST", url + "/resolve", key: "late")
            #expect(nothing.status == 404)
            #expect(nothing.json["field"] as? String == "Idempotency-Key")
            let other = Self.valid.replacingOccurrences(of: #""r-1""#, with: #""r-2""#)
            let late = try await Self.call("POST", url + "/reservations", key: "late", body: other)
            #expect(late.status == 409)
            #expect(late.json["field"] as? String == "Idempotency-Key")
            #expect(try await Self.call("GET", url + "/reservations/r-2").status == 404)
            let keyless = try await Self.call("POST", url + "/resolve")
            #expect(keyless.status == 400)
        }
    }

    @Test func aFailureRateOfOneAnswersServiceUnavailable() async throws {
        try await Self.withServer(failureRate: 1) { url in
            let answer = try await Self.call("POST", url + "/reservations", key: "k", body: Self.valid)
            #expect(answer.status == 503)
            let health = try await Self.call("GET", url + "/health")
            #expect(health.status == 200)
        }
    }
}
