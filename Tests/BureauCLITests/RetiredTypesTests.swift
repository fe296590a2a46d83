import Foundation
import Testing

@testable import BureauCLI

/// Every type retired in `Schemas/retired.txt` (gone from the schemas) is read by an upcaster
/// this build registers, so that its events in every log still read as their replacement.
struct RetiredTypesTests {
    static let retired =
        "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/Schemas/retired.txt"

    @Test func everyRetiredTypeHasAnUpcasterToItsReplacement() throws {
        let text = try #require(
            try? String(contentsOfFile: Self.retired, encoding: .utf8), "\(Self.retired) is missing")
        let upcasting = try Composition.upcasting()
        let readAs = Dictionary(upcasting.readAs.map { ($0.stored, $0.read) }, uniquingKeysWith: { first, _ in first })
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            let parts = trimmed.components(separatedBy: "->").map { $0.trimmingCharacters(in: .whitespaces) }
            try #require(parts.count == 2, "\(Self.retired):\(number + 1): '\(line)' is not OLD -> NEW")
            #expect(
                readAs[parts[0]] != nil,
                "\(Self.retired):\(number + 1): \(parts[0]) is retired, but no upcaster of this build reads it")
        }
    }

    @Test func theBuildsUpcastersCloseAndReadReservationsFromBeforeCommissions() throws {
        let upcasting = try Composition.upcasting()
        #expect(
            upcasting.readAs.map(\.stored).contains("bureau.reservations.ReservationAccepted"),
            "the reservations' first shape is read as today's")
        #expect(
            upcasting.readAs.first { $0.stored == "bureau.reservations.ReservationAccepted" }?.read
                == "bureau.reservations.ReservationAcceptedV2")
    }
}
