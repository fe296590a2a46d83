import Foundation
import TestSupport
import Testing

/// Every history in `Tests/Histories`, a log the real deployment wrote, folds with this build to
/// the read models it was recorded with, exactly, and `replay --verify` finds no divergence: a
/// change that alters what an old history folds to fails here, and is made on purpose with
/// `tools/record-history --refold` (the diff of `expected/` says what changed for users).
@Suite(.timeLimit(.minutes(5)))
struct RecordedHistoryTests {
    static let histories = "/" + #filePath.split(separator: "/").dropLast(2).joined(separator: "/") + "/Histories"

    static var names: [String] {
        Files.list(histories).filter { Files.isDirectory(histories + "/" + $0) }.sorted()
    }

    @Test func thereAreHistoriesToReplay() {
        #expect(!Self.names.isEmpty, "no history in \(Self.histories)")
    }

    @Test(arguments: Self.names)
    func aRecordedHistoryFoldsToTheReadModelsItWasRecordedWith(name: String) async throws {
        let history = Self.histories + "/" + name
        let log = history + "/log"
        let expected = history + "/expected"
        try #require(Files.isDirectory(log), "\(log) is missing")
        try #require(!Files.list(log).filter { $0.hasSuffix(".seg") }.isEmpty, "\(log) holds no segment")
        let models = Files.list(expected).filter { $0.hasSuffix(".json") }.sorted()
        try #require(!models.isEmpty, "\(expected) holds no read model")
        let verified = try #require(
            Files.read(expected + "/replay-verify.txt"), "\(expected)/replay-verify.txt is missing")

        // Folded from a copy: the tools never write to a history.
        let work = try TemporaryDirectory("history")
        try FileManager.default.copyItem(atPath: log, toPath: work.file("data/log"))
        let bureau = BusProcess(directory: work.path, data: work.file("data"))
        let check = try await bureau.run(["log", "verify"])
        #expect(check.code == 0, "\(name): log verify: \(check.out) \(check.err)")
        for file in models {
            let parts = file.dropLast(".json".count).split(separator: "@")
            try #require(parts.count == 2 && UInt64(parts[1]) != nil, "\(expected)/\(file): not MODEL@POSITION.json")
            let recorded = try #require(Files.read(expected + "/" + file), "\(expected)/\(file) cannot be read")
            let shown = try await bureau.run(["show", String(parts[0]), "--at", String(parts[1]), "--json"])
            #expect(shown.code == 0, "\(name): show \(file): \(shown.err)")
            #expect(
                shown.out == recorded,
                """
                \(name): \(file) folds differently now; if that is meant, run tools/record-history --refold \(name) \
                and say in the commit what changed for users:
                \(shown.out)
                """)
        }
        let replayed = try await bureau.run(["replay", "--verify"])
        #expect(replayed.code == 0, "\(name): replay --verify: \(replayed.out) \(replayed.err)")
        #expect(replayed.out == verified, "\(name): replay --verify says something else now:\n\(replayed.out)")
    }
}
