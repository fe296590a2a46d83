import BureauSchemas
import Bus
import Foundation
import Runtime
import TestSupport
import Testing

@testable import BureauCLI

/// `bureau run` built from a composition whose upcasters do not close refuses to start, naming
/// what is wrong, before it takes a lock or connects to a bus.
struct RunCommandTests {
    typealias AlertCleared = Bureau_Alerts_AlertCleared
    typealias AlertClearRequested = Bureau_Alerts_AlertClearRequested

    /// Reads an alert request as an armed alert, which nothing in the test's build reads.
    struct RequestAsArmed: Upcaster {
        var change: String { "an alert request read as armed" }
        func upcast(_ old: Bureau_Alerts_AlertSetRequested, of event: StoredEvent) throws -> Bureau_Alerts_AlertArmed {
            Bureau_Alerts_AlertArmed()
        }
    }

    struct ClearedAsRequested: Upcaster {
        var change: String { "one half of a circle" }
        func upcast(_ old: AlertCleared, of event: StoredEvent) throws -> AlertClearRequested {
            AlertClearRequested()
        }
    }

    struct RequestedAsCleared: Upcaster {
        var change: String { "the other half" }
        func upcast(_ old: AlertClearRequested, of event: StoredEvent) throws -> AlertCleared {
            AlertCleared()
        }
    }

    struct TriggeredAsRearmed: Upcaster {
        var change: String { "one reading of a triggered alert" }
        func upcast(_ old: Bureau_Alerts_AlertTriggered, of event: StoredEvent) throws -> Bureau_Alerts_AlertRearmed {
            Bureau_Alerts_AlertRearmed()
        }
    }

    struct TriggeredAsCleared: Upcaster {
        var change: String { "another reading of the same" }
        func upcast(_ old: Bureau_Alerts_AlertTriggered, of event: StoredEvent) throws -> Bureau_Alerts_AlertCleared {
            AlertCleared()
        }
    }

    /// A build of one feature that reads rearmed and cleared alerts, with these upcasters.
    static func composition(_ upcasters: [any Upcaster]) -> Composition {
        Composition(
            registry: ModuleRegistry([
                FeatureModule(
                    name: "alerts", summary: "a test's", upcasters: upcasters,
                    consumes: [Bureau_Alerts_AlertRearmed.protoMessageName, AlertCleared.protoMessageName],
                    makeHost: { _ in OneShotService {} })
            ]))
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let upcasters: [any Upcaster]
        let named: [String]
        var testDescription: String { name }
    }

    static let cases = [
        Case(
            name: "a gap", upcasters: [RequestAsArmed()],
            named: [
                "bureau.alerts.AlertArmed, which RequestAsArmed makes of bureau.alerts.AlertSetRequested, is read by nothing",
                "an upcaster is missing",
            ]),
        Case(
            name: "a cycle", upcasters: [ClearedAsRequested(), RequestedAsCleared()],
            named: [
                "the upcasters go round: bureau.alerts.AlertClearRequested → bureau.alerts.AlertCleared → bureau.alerts.AlertClearRequested"
            ]),
        Case(
            name: "two for one shape", upcasters: [TriggeredAsRearmed(), TriggeredAsCleared()],
            named: ["two upcasters read bureau.alerts.AlertTriggered: TriggeredAsRearmed and TriggeredAsCleared"]),
    ]

    @Test(arguments: cases)
    func aProcessWhoseUpcastersDoNotCloseRefusesToStartNamingThem(_ broken: Case) async throws {
        let work = try TemporaryDirectory("run-upcasters")
        // No bus: a run that got past the check would fail differently (or wait for one).
        let command = try RunCommand.parse(["alerts", "--data", work.file("data")])
        do {
            try await command.run(composition: Self.composition(broken.upcasters))
            Issue.record("\(broken.name): bureau run started")
        } catch {
            let message = "\(error)"
            #expect(message.hasPrefix("the upcasters cannot be used: "), "\(message)")
            for part in broken.named { #expect(message.contains(part), "\(broken.name): \(message)") }
        }
        #expect(
            !FileManager.default.fileExists(atPath: work.file("data/snapshots/alerts.lock")),
            "it took the module's lock before the check")
    }

    @Test func theProductsUpcastersClose() throws {
        #expect(throws: Never.self) { try Composition.product.checkedUpcasting() }
    }

    @Test(arguments: ["=", "=x", "rates-url"])
    func aSettingWithoutANameOrAnEqualsSignIsRefusedNamingIt(setting: String) {
        let error = #expect(throws: (any Error).self) { try RunCommand.parse(["alerts", "--set", setting]) }
        #expect(
            RunCommand.message(for: error ?? CancellationError()).contains("--set takes name=value, not '\(setting)'"))
    }
}
