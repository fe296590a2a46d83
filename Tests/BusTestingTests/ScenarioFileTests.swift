import AlertsFeature
import BusTesting
import ConverterFeature
import Foundation
import ReservationsFeature
import Runtime
import Testing
import WatchlistFeature

/// Reading scenario files: what they say, and errors that name the file, the line and the field.
@Suite struct ScenarioFileTests {
    static let router = ModuleRegistry([
        WatchlistModule.make(), ConverterModule.make(), ReservationsModule.make(), AlertsModule.make(),
    ]).router

    func error(_ text: String) -> String {
        do {
            _ = try ScenarioFile.parse(text, file: "s.yaml")
            return "(parsed)"
        } catch {
            return error.description
        }
    }

    @Test func aFileReadsAsItsStepsAndExpectations() throws {
        let suite = try ScenarioFile.parse(
            """
            given:
              - type: bureau.rates.RatesPublished
                payload: { asOf: "2024-03-01", base: EUR, rates: [{ currency: USD, rate: 1.0832 }] }
            scenarios:
              - name: adds
                given:
                  - command: bureau://watchlist/add?base=EUR&quote=GBP
                when:
                  command: bureau://watchlist/add?base=EUR&quote=USD
                expect:
                  - type: bureau.watchlist.PairRejected
                    fields: { base: EUR, quote: "USD", message: true, reason: ~ }
                    capture: { pair: quote }
                exhaustive: false
                timeout_s: 2.5
            """, file: "s.yaml")
        #expect(suite.given.count == 1)
        guard case .event(let type, let payload, let line) = suite.given[0] else {
            Issue.record("the background is an event")
            return
        }
        #expect(type == "bureau.rates.RatesPublished")
        #expect(line == 2)
        // Every scalar but true, false and null is text, as written: 1.0832 stays 1.0832.
        #expect(payload["rates"] == .array([.object([("currency", .string("USD")), ("rate", .string("1.0832"))])]))
        let scenario = suite.scenarios[0]
        #expect(scenario.name == "adds")
        #expect(scenario.exhaustive == false)
        #expect(scenario.timeout == .milliseconds(2500))
        guard case .command(let url, _) = scenario.when else {
            Issue.record("when is a command")
            return
        }
        #expect(url == "bureau://watchlist/add?base=EUR&quote=USD")
        #expect(
            scenario.expect[0].fields
                == .object([
                    ("base", .string("EUR")), ("quote", .string("USD")), ("message", .bool(true)), ("reason", .null),
                ]))
        #expect(scenario.expect[0].captures.map(\.variable) == ["pair"])
    }

    @Test func everyMistakeNamesTheLineAndTheField() {
        #expect(error("") == "s.yaml: the file is empty")
        #expect(error("scenarios: [\n").hasPrefix("s.yaml:2: not valid YAML"))
        #expect(error("given: []\n") == "s.yaml:1: scenarios: is missing: a file needs at least one scenario")
        #expect(
            error("scenarios:\n  - name: a\n    when: { command: bureau://x/y }\n    expect: []\n    exhaustiv: true\n")
                == "s.yaml:5: scenarios[0].exhaustiv: unknown field; known: exhaustive, expect, given, name, timeout_s, when"
        )
        #expect(
            error("scenarios:\n  - name: a\n    when: { command: bureau://x/y }\n")
                == "s.yaml:2: scenario 'a'.expect: is missing; write `expect: []` to expect nothing")
        #expect(
            error("scenarios:\n  - name: a\n    when: { type: bureau.watchlist.PairAded }\n    expect: []\n")
                .hasPrefix(
                    "s.yaml:3: scenario 'a'.when.type: unknown event type 'bureau.watchlist.PairAded'; known here: "))
        #expect(
            error("scenarios:\n  - name: a\n    when: { payload: {} }\n    expect: []\n")
                == "s.yaml:3: scenario 'a'.when: needs either `command: bureau://…` or `type:` (with an optional `payload:`)"
        )
        #expect(
            error("scenarios:\n  - name: a\n    when: { command: bureau://x/y }\n    expect: []\n    timeout_s: soon\n")
                == "s.yaml:5: scenario 'a'.timeout_s: 'soon' is not a number (give seconds from 0.001 to 3600)")
        #expect(
            error("scenarios:\n  - name: a\n    when: { command: bureau://x/y }\n    expect: []\n    timeout_s: .inf\n")
                == "s.yaml:5: scenario 'a'.timeout_s: '.inf' is not a number (give seconds from 0.001 to 3600)")
        #expect(
            error(
                "scenarios:\n  - name: a\n    when: { command: bureau://x/y }\n    expect: []\n"
                    + "  - name: a\n    when: { command: bureau://x/y }\n    expect: []\n")
                == "s.yaml:5: scenarios[1].name: 'a' is used twice")
        #expect(
            error(
                "scenarios:\n  - name: a\n    when: { command: bureau://x/y }\n    expect:\n"
                    + "      - type: bureau.watchlist.PairAdded\n        capture: { a-b: base }\n")
                == "s.yaml:6: scenario 'a'.expect[0].capture: 'a-b' is not a variable name (letters, digits and _)")
    }

    /// A few hundred bytes whose aliases expand to a billion nodes: refused before anything is
    /// composed or walked, quickly, naming the file and the line.
    @Test func aBillionLaughsIsRefusedQuickly() {
        var text = "given:\n  - type: bureau.watchlist.PairAddRequested\n    payload: &a {base: EUR, quote: USD}\n"
        text += "laughs:\n  a: &a0 [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        for level in 1..<9 {
            text +=
                "  l\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 9).joined(separator: ", ")
                + "]\n"
        }
        text += "scenarios:\n  - name: a\n    when: { command: bureau://x/y }\n    expect: []\n"
        let started = ContinuousClock.now
        let message = error(text)
        #expect(
            message.hasPrefix("s.yaml:9: expands to more than 100000 nodes once its aliases are expanded"), "\(message)"
        )
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test func anOversizedFileIsRefusedNamingItAndTheLimit() throws {
        let path = NSTemporaryDirectory() + "oversized-\(UUID().uuidString).yaml"
        let scenario = "scenarios:\n  - name: a\n    when: { command: bureau://x/y }\n    expect: []\n"
        try (scenario + String(repeating: "# filler line\n", count: 80_000)).write(
            toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(
            throws: ScenarioFileError(
                file: path, line: nil, field: nil, problem: "is larger than 1 MiB, the limit for a file the tool reads")
        ) { try ScenarioFile.load(path) }
    }

    @Test func aFieldTheEventDoesNotHaveIsAMistakeNotAWildcard() {
        #expect(
            error(
                "scenarios:\n  - name: a\n    when: { command: bureau://x/y }\n    expect:\n"
                    + "      - type: bureau.watchlist.PairAdded\n        fields:\n          base: EUR\n          qoute: USD\n"
            )
                == "s.yaml:8: scenario 'a'.expect[0].fields.qoute: bureau.watchlist.PairAdded has no field 'qoute'")
        #expect(
            error(
                "scenarios:\n  - name: a\n    when: { type: bureau.watchlist.PairAddRequested, payload: { bse: EUR } }\n"
                    + "    expect: []\n")
                == "s.yaml:3: scenario 'a'.when.payload.bse: bureau.watchlist.PairAddRequested has no field 'bse'")
    }

    @Test func withARouterEveryCommandWithoutVariablesMustRoute() throws {
        let router = ModuleRegistry([WatchlistModule.make()]).router
        let text = """
            scenarios:
              - name: a
                when: { command: "bureau://watchlist/ad?base=EUR&quote=USD" }
                expect: []
            """
        #expect(throws: Never.self) { try ScenarioFile.parse(text, file: "s.yaml") }
        #expect(
            throws: ScenarioFileError(
                file: "s.yaml", line: 3, field: "command",
                problem: "module watchlist has no command 'ad'; it has: add, remove")
        ) { try ScenarioFile.parse(text, file: "s.yaml", router: router) }
        let later = text.replacingOccurrences(of: "watchlist/ad?base=EUR", with: "watchlist/ad?base=${base}")
        #expect(throws: Never.self) { try ScenarioFile.parse(later, file: "s.yaml", router: router) }
    }

    @Test func theProjectsScenarioFilesAllParse() throws {
        let directory = String(#filePath.split(separator: "/").dropLast(2).joined(separator: "/"))
        for name in ["watchlist", "converter", "reservations", "alerts"] {
            let suite = try ScenarioFile.load("/\(directory)/Scenarios/\(name).yaml", router: Self.router)
            #expect(!suite.scenarios.isEmpty, "\(name)")
        }
    }
}
