import BureauSchemas
import Bus
import BusTesting
import EventLog
import Runtime
import SwiftProtobuf
import Testing
import WatchlistFeature

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Matching committed events against patterns: subsets, exact messages, wildcards, defaults.
@Suite struct EventPatternTests {
    func stored(_ message: some SwiftProtobuf.Message) throws -> StoredEvent {
        StoredEvent(
            position: 7, id: .random(), type: type(of: message).protoMessageName,
            commitTime: CommitTime(seconds: 0, nanos: 0),
            payload: try message.serializedData())
    }

    let rejected = PairRejected(base: "EUR", quote: "USD", reason: .duplicate, message: "EUR/USD is already watched")

    @Test func aSubsetPatternComparesOnlyTheFieldsItNames() throws {
        let event = try stored(rejected)
        #expect(
            EventPattern(type: "bureau.watchlist.PairRejected", fields: .object([("base", .string("EUR"))])).matches(
                event))
        #expect(EventPattern(type: "bureau.watchlist.PairRejected").matches(event))
        #expect(!EventPattern(type: "bureau.watchlist.PairAdded").matches(event), "another type never matches")
    }

    @Test func scalarsCompareAsTextAndEnumsByName() throws {
        let pattern = EventPattern(
            type: "bureau.watchlist.PairRejected",
            fields: .object([("reason", .string("DUPLICATE")), ("quote", .string("USD"))]))
        #expect(pattern.matches(try stored(rejected)))
        let wrong = EventPattern(
            type: "bureau.watchlist.PairRejected", fields: .object([("reason", .string("NOT_FOUND"))]))
        #expect(
            wrong.mismatches(in: try stored(rejected)) == [
                FieldDifference(path: "reason", before: .string("NOT_FOUND"), after: .string("DUPLICATE"))
            ])
    }

    @Test func aStarMatchesAnyValueOrNone() throws {
        let pattern = EventPattern(
            type: "bureau.watchlist.PairRejected",
            fields: .object([("message", .string("*")), ("nothingHere", .string("*"))]))
        #expect(pattern.matches(try stored(rejected)))
    }

    @Test func anAbsentFieldMatchesItsDefaultValue() throws {
        var added = PairAdded()
        added.base = "EUR"
        let event = try stored(added)
        #expect(
            EventPattern(type: "bureau.watchlist.PairAdded", fields: .object([("quote", .string(""))])).matches(event))
        let missing = EventPattern(type: "bureau.watchlist.PairAdded", fields: .object([("quote", .string("USD"))]))
        #expect(missing.mismatches(in: event) == [FieldDifference(path: "quote", before: .string("USD"), after: nil)])
    }

    @Test func aTypedPatternIsExactButForTheFieldsItIgnores() throws {
        let event = try stored(rejected)
        #expect(EventPattern(rejected).matches(event))
        let withoutMessage = PairRejected(base: "EUR", quote: "USD", reason: .duplicate, message: "")
        #expect(
            EventPattern(withoutMessage).mismatches(in: event) == [
                FieldDifference(path: "message", before: nil, after: .string("EUR/USD is already watched"))
            ], "an exact pattern fails on a field it does not have")
        #expect(EventPattern(withoutMessage, ignoring: ["message"]).matches(event))
        let other = PairRejected(base: "EUR", quote: "GBP", reason: .duplicate, message: "whatever")
        #expect(EventPattern(other, ignoring: ["message"]).mismatches(in: event)?.map(\.path) == ["quote"])
    }

    @Test func ignoringReachesIntoEveryItemOfAList() throws {
        var published = Bureau_Rates_RatesPublished()
        published.base = "EUR"
        published.rates = [
            Bureau_Rates_Rate.with {
                $0.currency = "USD"; $0.rate = "1.1"
            }
        ]
        var actual = published
        actual.rates[0].rate = "1.2"
        #expect(!EventPattern(published).matches(try stored(actual)))
        #expect(EventPattern(published, ignoring: ["rates.rate"]).matches(try stored(actual)))
    }
}
