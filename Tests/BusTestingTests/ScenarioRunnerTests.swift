import AlertsFeature
import BusTesting
import Runtime
import TestSupport
import Testing
import WatchlistFeature

/// Scenario files run against real reducers, on the in-memory twin and, for some, on a real daemon too.
@Suite(.timeLimit(.minutes(2)))
struct ScenarioRunnerTests {
    static let registry = ModuleRegistry([WatchlistModule.make(), AlertsModule.make()])

    /// Runs the scenario file `text` on a fresh deployment of `tier` (the in-memory twin unless
    /// a test runs live too).
    func run(_ text: String, on tier: BusTier = .inMemory) async throws -> [ScenarioResult] {
        let suite = try ScenarioFile.parse(text, file: "test.yaml")
        let deployment = try await tier.deployment(
            modules: Self.registry.modules, logger: TestLogging.logger("deployment"))
        var options = BusFixture.Options()
        options.timeout = .seconds(20)
        let runner = ScenarioRunner(fixture: deployment.fixture(router: Self.registry.router, options: options))
        return try await deployment.run { _ in await runner.run(suite) }
    }

    static let background = """
        given:
          - type: bureau.rates.RatesPublished
            payload: { asOf: "2024-03-01", base: EUR, rates: [{ currency: USD, rate: "1.0832" }] }

        """

    @Test(arguments: BusTier.allCases)
    func capturedValuesFlowIntoLaterScenariosAndIntoTheirOwnExpectation(tier: BusTier) async throws {
        let results = try await run(
            Self.background + """
                scenarios:
                  - name: arm
                    when: { command: "bureau://alerts/set?base=EUR&quote=USD&above=1.09" }
                    expect:
                      - type: bureau.alerts.AlertArmed
                        fields: { alertId: "${armed}", threshold: "1.09" }
                        capture: { armed: alertId }
                  - name: clear
                    when: { command: "bureau://alerts/clear?id=${armed}" }
                    expect:
                      - type: bureau.alerts.AlertCleared
                        fields: { alertId: "${armed}" }
                """, on: tier)
        #expect(results.map(\.passed) == [true, true], "\(results.map(\.summary))")
    }

    @Test func aFailingScenarioIsReportedAndTheNextOneStillRuns() async throws {
        let results = try await run(
            Self.background + """
                scenarios:
                  - name: wrong quote
                    when: { command: "bureau://watchlist/add?base=EUR&quote=USD" }
                    expect:
                      - type: bureau.watchlist.PairAdded
                        fields: { quote: GBP }
                    timeout_s: 8
                  - name: unknown variable
                    when: { command: "bureau://alerts/clear?id=${nobody}" }
                    expect: []
                  - name: duplicate
                    when: { command: "bureau://watchlist/add?base=EUR&quote=USD" }
                    expect:
                      - type: bureau.watchlist.PairRejected
                        fields: { reason: DUPLICATE }
                """)
        #expect(results.map(\.passed) == [false, false, true])
        #expect(results[0].failure?.contains(#"quote: expected "GBP", got "USD""#) == true, "\(results[0].summary)")
        #expect(results[1].failure == "line 12: no variable 'nobody' has been captured")
        #expect(results[0].summary.hasPrefix("✗ test.yaml: wrong quote ("))
        #expect(results[2].summary.hasPrefix("✓ test.yaml: duplicate ("))
    }

    @Test func aFailedBackgroundFailsEveryScenarioOfTheFile() async throws {
        let results = try await run(
            """
            given:
              - command: bureau://watchlist/add?base=EUR&quote=USD
            scenarios:
              - name: one
                when: { command: "bureau://watchlist/remove?base=EUR&quote=USD" }
                expect: []
              - name: two
                when: { command: "bureau://watchlist/remove?base=EUR&quote=USD" }
                expect: []
            """)
        #expect(results.map(\.passed) == [false, false])
        #expect(
            results.allSatisfy {
                $0.failure?.hasPrefix(
                    "the file's given steps failed: line 2: the given command bureau://watchlist/add?base=EUR&quote=USD was rejected:"
                ) == true
            }, "\(results.map(\.summary))")
    }

    @Test func aPayloadThatIsNotTheEventsFailsNamingIt() async throws {
        let results = try await run(
            """
            scenarios:
              - name: bad payload
                when:
                  type: bureau.watchlist.PairAddRequested
                  payload: { base: [EUR] }
                expect: []
            """)
        #expect(
            results[0].failure?.hasPrefix("line 4: the payload is not a valid bureau.watchlist.PairAddRequested: ")
                == true, "\(results[0].summary)")
    }
}
