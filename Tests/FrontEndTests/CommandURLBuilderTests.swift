import AlertsFeature
import ConverterFeature
import Foundation
import ReservationsFeature
import Runtime
import TestSupport
import Testing
import WatchlistFeature

/// Each command's typed builder, generated from its spec, builds a URL that routes back to the
/// request it names; the generated files match the specs.
struct CommandURLBuilderTests {
    /// Every feature module with commands: its builders' namespace, its specs and where they are declared.
    static let modules: [(namespace: String, commands: [CommandSpec], declaredIn: String, folder: String)] = [
        ("Watchlist", WatchlistModule.commands, "WatchlistModule.commands", "Watchlist"),
        ("Converter", ConverterModule.commands, "ConverterModule.commands", "Converter"),
        ("Reservations", ReservationsModule.commands, "ReservationsModule.commands", "Reservations"),
        ("Alerts", AlertsModule.commands, "AlertsModule.commands", "Alerts"),
    ]

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The committed builders equal what the specs generate; with BUREAU_REGENERATE_COMMANDS=1
    /// (`tools/generate-commands`) they are rewritten instead.
    @Test(arguments: modules.map(\.namespace))
    func theGeneratedBuildersMatchTheSpecs(namespace: String) throws {
        let module = try #require(Self.modules.first { $0.namespace == namespace })
        let source = CommandURLSource.render(
            namespace: module.namespace, commands: module.commands, declaredIn: module.declaredIn)
        let path = "Sources/Features/\(module.folder)/CommandURL+\(module.namespace).swift"
        let file = Self.repository.appendingPathComponent(path)
        if ProcessInfo.processInfo.environment["BUREAU_REGENERATE_COMMANDS"] == "1" {
            try source.write(to: file, atomically: true, encoding: .utf8)
            return
        }
        let committed = try String(contentsOf: file, encoding: .utf8)
        #expect(committed == source, "\(path) is stale; run tools/generate-commands and commit the result")
    }

    @Test func everyRoutedCommandHasABuilderNamespace() {
        let namespaces: Set<String> = Set(Self.modules.map { $0.commands.first?.module ?? "" })
        #expect(Set(Fixtures.router.modules) == namespaces)
    }

    /// The request each builder's URL routes to, with the router's normalisation.
    @Test(arguments: [
        (CommandURL.Watchlist.add(base: "eur", quote: "USD"), Emitted(PairAddRequested(base: "EUR", quote: "USD"))),
        (
            CommandURL.Watchlist.remove(base: "GBP", quote: "chf"),
            Emitted(PairRemoveRequested(base: "GBP", quote: "CHF"))
        ),
        (
            CommandURL.Converter.amount(value: "250.50", currency: "usd"),
            Emitted(AmountSetRequested(value: "250.50", currency: "USD"))
        ),
        (
            CommandURL.Reservations.reserve(base: "EUR", quote: "GBP", amount: "500", rate: "0.8562"),
            Emitted(ReservationRequested(base: "EUR", quote: "GBP", amount: "500", rate: "0.8562"))
        ),
        (CommandURL.Reservations.cancel(id: "r7"), Emitted(CancellationRequested(reservationID: "R7"))),
        (
            CommandURL.Alerts.set(base: "USD", quote: "JPY", above: "170"),
            Emitted(AlertSetRequested(base: "USD", quote: "JPY", direction: .above, threshold: "170"))
        ),
        (
            CommandURL.Alerts.set(base: "USD", quote: "JPY", below: "150.5"),
            Emitted(AlertSetRequested(base: "USD", quote: "JPY", direction: .below, threshold: "150.5"))
        ),
        (CommandURL.Alerts.clear(id: "A12"), Emitted(AlertClearRequested(alertID: "A12"))),
    ])
    func aBuiltURLRoutesBackToItsRequest(url: CommandURL, request: Emitted) throws {
        #expect(try Fixtures.router.route(url.text).request == request)
    }

    @Test func theURLReadsAsAPersonWouldTypeIt() {
        #expect(CommandURL.Watchlist.add(base: "EUR", quote: "USD").text == "bureau://watchlist/add?base=EUR&quote=USD")
        #expect(
            CommandURL.Alerts.set(base: "EUR", quote: "USD", below: "1.0").text
                == "bureau://alerts/set?base=EUR&quote=USD&below=1.0")
    }

    /// A value stays one value: what a person types cannot add or replace a parameter.
    @Test func aValueThatLooksLikeMoreParametersIsEscaped() {
        let url = CommandURL.Converter.amount(value: "1&currency=JPY", currency: "EUR")
        #expect {
            _ = try Fixtures.router.route(url.text)
        } throws: { error in
            "\(error)".contains("'1&currency=JPY' is not a valid value")
        }
    }
}
