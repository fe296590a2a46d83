import AlertsFeature
import BureauSchemas
import Bus
import BusTesting
import FeatureTestSupport
import Runtime
import TestSupport
import Testing
import WatchlistFeature

/// Given / when / expect on a real bus with real reducers, and the reports a failing expectation gives.
@Suite(.timeLimit(.minutes(2)))
struct BusFixtureTests {
    static let registry = ModuleRegistry([WatchlistModule.make(), AlertsModule.make()])

    /// Runs `body` on a fresh deployment of `tier` (the in-memory twin unless a test runs live
    /// too) with the watchlist and alerts hosted, and stops it after.
    func withFixture(
        on tier: BusTier = .inMemory,
        _ configure: (inout BusFixture.Options) -> Void = { _ in },
        _ body: (BusFixture, TestDeployment) async throws -> Void
    ) async throws {
        let deployment = try await tier.deployment(
            modules: Self.registry.modules, logger: TestLogging.logger("deployment"))
        var options = BusFixture.Options()
        // Generous: a passing expectation returns as soon as its events are in, and CI runs
        // this beside a minute of chaos.
        options.timeout = .seconds(20)
        configure(&options)
        let fixture = deployment.fixture(router: Self.registry.router, options: options)
        try await deployment.run { deployment in try await body(fixture, deployment) }
    }

    @Test(arguments: BusTier.allCases)
    func aCommandsAnswerIsExpectedByTypeAndFields(tier: BusTier) async throws {
        try await withFixture(on: tier) { fixture, deployment in
            try await fixture.given([Emitted(rates(["USD": "1.1172", "GBP": "0.8571"]))])
            let matched = try await fixture.when(
                command: CommandURL.Watchlist.add(base: "EUR", quote: "USD").text,
                expect: [EventPattern(PairAdded(base: "EUR", quote: "USD"))])
            #expect(matched.map(\.type) == ["bureau.watchlist.PairAdded"])
            try await fixture.when(
                command: CommandURL.Watchlist.add(base: "EUR", quote: "USD").text,
                expect: [
                    EventPattern(
                        PairRejected(base: "EUR", quote: "USD", reason: .duplicate, message: ""), ignoring: ["message"])
                ])
        }
    }

    @Test func anEventNobodyExpectedFailsWithTheFieldsThatDiffer() async throws {
        try await withFixture { fixture, deployment in
            try await fixture.given([Emitted(rates(["USD": "1.1172", "GBP": "0.8571"]))])
            let sent = try await fixture.when(command: CommandURL.Watchlist.add(base: "EUR", quote: "USD").text)
            let failure = await #expect(throws: ExpectationFailure.self) {
                // The answer is in the log first, so that the short timeout below is not a race.
                try await fixture.expect(sent, [EventPattern(type: "bureau.watchlist.PairAdded")])
                try await fixture.expect(
                    sent, [EventPattern(PairAdded(base: "EUR", quote: "GBP"))], timeout: .seconds(1))
            }
            #expect(failure?.unexpected.map(\.type) == ["bureau.watchlist.PairAdded"])
            let report = failure?.description ?? ""
            #expect(report.contains("after bureau://watchlist/add?base=EUR&quote=USD (position 2)"), "\(report)")
            #expect(
                report.contains(#"missing    bureau.watchlist.PairAdded {"base":"EUR","quote":"GBP"}"#), "\(report)")
            #expect(report.contains(#"quote: expected "GBP", got "USD""#), "\(report)")
            #expect(
                report.contains(#"unexpected bureau.watchlist.PairAdded at position 3: {"base":"EUR","quote":"USD"}"#))
        }
    }

    @Test func anEventThatNeverComesFailsNamingWhatWasAwaitedAndForHowLong() async throws {
        try await withFixture { fixture, _ in
            try await fixture.given([Emitted(rates(["USD": "1.1172"]))])
            let sent = try await fixture.when(command: CommandURL.Watchlist.remove(base: "EUR", quote: "USD").text)
            // The answer is in the log first, so that the short timeout below is not a race.
            try await fixture.expect(sent, [EventPattern(type: "bureau.watchlist.PairRejected")])
            let failure = await #expect(throws: ExpectationFailure.self) {
                try await fixture.expect(
                    sent,
                    [
                        EventPattern(type: "bureau.watchlist.PairRejected"),
                        EventPattern(type: "bureau.watchlist.PairRemoved"),
                    ], timeout: .milliseconds(500))
            }
            #expect(failure?.missing.map(\.pattern.type) == ["bureau.watchlist.PairRemoved"])
            #expect(failure?.unexpected.isEmpty == true)
            let report = failure?.description ?? ""
            #expect(report.contains("missing    bureau.watchlist.PairRemoved {}, not seen within "), "\(report)")
            #expect(failure.map { $0.waited >= .milliseconds(500) } == true, "it waited the whole timeout")
        }
    }

    @Test(arguments: BusTier.allCases)
    func exhaustiveModeFailsOnAnUnassertedEventThatNonExhaustiveModeIgnores(tier: BusTier) async throws {
        try await withFixture(on: tier) { fixture, deployment in
            try await fixture.given([Emitted(rates(["USD": "1.1172", "GBP": "0.8571"]))])
            try await fixture.given(command: CommandURL.Alerts.set(base: "EUR", quote: "USD", above: "1.2").text)
            try await fixture.given(command: CommandURL.Alerts.set(base: "EUR", quote: "GBP", above: "0.9").text)
            // One rates event crosses both thresholds: two AlertTriggered in its chain.
            let moved = try await fixture.when(Emitted(rates(["USD": "1.25", "GBP": "0.95"], asOf: "2026-10-31")))
            let onlyUSD = [
                EventPattern(type: "bureau.alerts.AlertTriggered", fields: .object([("quote", .string("USD"))]))
            ]
            let failure = await #expect(throws: ExpectationFailure.self) { try await fixture.expect(moved, onlyUSD) }
            #expect(failure?.missing.isEmpty == true)
            #expect(failure?.unexpected.count == 1)
            #expect(failure?.description.contains(#""quote":"GBP""#) == true)
            let matched = try await fixture.expect(moved, onlyUSD, exhaustivity: .nonExhaustive)
            #expect(matched.count == 1)
        }
    }

    @Test func eventsMatchPatternsWhateverTheOrderTheyArriveIn() async throws {
        try await withFixture { fixture, _ in
            try await fixture.given([Emitted(rates(["USD": "1.1172", "GBP": "0.8571"]))])
            try await fixture.given(command: CommandURL.Alerts.set(base: "EUR", quote: "USD", above: "1.2").text)
            try await fixture.given(command: CommandURL.Alerts.set(base: "EUR", quote: "GBP", above: "0.9").text)
            // The USD alert triggers first and fits both patterns; taking the first pattern
            // would leave the GBP event without one.
            try await fixture.when(
                Emitted(rates(["USD": "1.25", "GBP": "0.95"], asOf: "2026-10-31")),
                expect: [
                    EventPattern(type: "bureau.alerts.AlertTriggered"),
                    EventPattern(type: "bureau.alerts.AlertTriggered", fields: .object([("quote", .string("USD"))])),
                ])
        }
    }

    @Test func expectingNothingPassesOnlyWhenTheChainStaysEmpty() async throws {
        try await withFixture { fixture, deployment in
            let first = try await fixture.when(Emitted(rates(["USD": "1.1172"])))
            try await fixture.expect(first, [])
            try await fixture.given(command: CommandURL.Alerts.set(base: "EUR", quote: "USD", below: "1.0").text)
            let fall = try await fixture.when(Emitted(rates(["USD": "0.99"], asOf: "2026-10-31")))
            // Awaited first, so that what is checked is the verdict on an event in the chain, not
            // whether the alerts module answers within the quiet period (on a loaded machine it
            // may not: an event that comes after it is the limit the type's comment names).
            try await fixture.expect(
                fall, [EventPattern(type: "bureau.alerts.AlertTriggered")], exhaustivity: .nonExhaustive)
            let failure = await #expect(throws: ExpectationFailure.self) { try await fixture.expect(fall, []) }
            #expect(failure?.unexpected.map(\.type) == ["bureau.alerts.AlertTriggered"])
        }
    }

    @Test func aURLThatDoesNotRouteIsRefusedBeforeAnythingIsPublished() async throws {
        try await withFixture { fixture, deployment in
            await #expect(throws: CommandError.unknownModule("nope", known: ["alerts", "watchlist"])) {
                try await fixture.when(command: "bureau://nope/add")
            }
            let head = try await deployment.client.ping().head
            #expect(head == 0)
        }
    }
}
