import BureauSchemas
import Bus
import Foundation
import Testing

@testable import BureauCLI

/// Every type retired in `Schemas/retired.txt` (gone from the schemas) is read by an upcaster
/// this build registers as the replacement that line names, so that its events in every log
/// still read as that type.
struct RetiredTypesTests {
    static let retired =
        "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/Schemas/retired.txt"

    /// What is wrong with `upcasting` for the retirements in `text` (retired.txt's format), one
    /// line a problem naming the file and line.
    static func problems(retiring text: String, in path: String, upcasting: EventUpcasting) -> [String] {
        let readAs = Dictionary(upcasting.readAs.map { ($0.stored, $0.read) }, uniquingKeysWith: { first, _ in first })
        var problems: [String] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            let parts = trimmed.components(separatedBy: "->").map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else {
                problems.append("\(path):\(number + 1): '\(line)' is not OLD -> NEW")
                continue
            }
            switch readAs[parts[0]] {
            case nil:
                problems.append("\(path):\(number + 1): \(parts[0]) is retired, but no upcaster of this build reads it")
            case let read? where read != parts[1]:
                problems.append(
                    "\(path):\(number + 1): \(parts[0]) is retired into \(parts[1]), but this build's upcasters read it as \(read)"
                )
            default:
                break
            }
        }
        return problems
    }

    @Test func everyRetiredTypeIsReadAsItsReplacement() throws {
        let text = try #require(
            try? String(contentsOfFile: Self.retired, encoding: .utf8), "\(Self.retired) is missing")
        let problems = Self.problems(retiring: text, in: Self.retired, upcasting: try Composition.upcasting())
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// The check itself, on a retirement the build does not make: read by nothing, or read as
    /// another type than the line says.
    @Test func aRetiredTypeReadAsAnotherTypeThanItsReplacementIsNamed() throws {
        let text = """
            # a comment
            bureau.alerts.AlertDismissed -> bureau.alerts.AlertCleared
            bureau.alerts.AlertGone -> bureau.alerts.AlertCleared
            """
        let upcasting = try EventUpcasting(
            [RenamedEvent(from: "bureau.alerts.AlertDismissed", to: Bureau_Alerts_AlertArmed.self)],
            readTypes: [Bureau_Alerts_AlertArmed.protoMessageName])
        #expect(
            Self.problems(retiring: text, in: "retired.txt", upcasting: upcasting) == [
                "retired.txt:2: bureau.alerts.AlertDismissed is retired into bureau.alerts.AlertCleared, but this build's upcasters read it as bureau.alerts.AlertArmed",
                "retired.txt:3: bureau.alerts.AlertGone is retired, but no upcaster of this build reads it",
            ])
        let right = try EventUpcasting(
            [RenamedEvent(from: "bureau.alerts.AlertDismissed", to: Bureau_Alerts_AlertCleared.self)],
            readTypes: [Bureau_Alerts_AlertCleared.protoMessageName])
        #expect(Self.problems(retiring: text, in: "retired.txt", upcasting: right).count == 1)
    }

    @Test func theBuildsUpcastersCloseAndReadReservationsFromBeforeCommissions() throws {
        let upcasting = try Composition.upcasting()
        #expect(
            upcasting.readAs.first { $0.stored == "bureau.reservations.ReservationAccepted" }?.read
                == "bureau.reservations.ReservationAcceptedV2",
            "the reservations' first shape is read as today's")
    }
}
