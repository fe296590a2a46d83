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

    static let recorder =
        "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/tools/record-history"

    static var names: [String] {
        Files.list(histories).filter { Files.isDirectory(histories + "/" + $0) }.sorted()
    }

    @Test func thereAreHistoriesToReplay() {
        #expect(!Self.names.isEmpty, "no history in \(Self.histories)")
    }

    /// What is wrong with the files of the history in `directory`: each file its
    /// `manifest.sha256` lists must be there with that SHA-256, no other file may be in its
    /// `log/` or `expected/`, and the manifest must list a segment, `replay-verify.txt` and a read
    /// model. (Which file names the newest segment depends on the log's format: `recovery-point`,
    /// `HEAD` before it, none in the first; the manifest lists what the log holds.) One line a
    /// problem, naming the file; empty when all is well.
    static func problems(inHistory directory: String) async throws -> [String] {
        let manifest = directory + "/manifest.sha256"
        guard let text = Files.read(manifest) else {
            return ["\(manifest) is missing: tools/record-history --refold writes it"]
        }
        var problems: [String] = []
        var listed: [String: String] = [:]
        for (number, line) in text.split(separator: "\n").enumerated() {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0].count == 64, parts[0].allSatisfy(\.isHexDigit), parts[1].hasPrefix(" ")
            else {
                problems.append("\(manifest):\(number + 1): not '<sha256>  <file>': \(line)")
                continue
            }
            listed[String(parts[1].dropFirst())] = parts[0]
        }
        let present = Set(
            ["log", "expected"].flatMap { folder in
                Files.list(directory + "/" + folder).map { folder + "/" + $0 }
                    .filter { !Files.isDirectory(directory + "/" + $0) }
            })
        for file in listed.keys.sorted() where !present.contains(file) {
            problems.append("\(directory)/\(file) is missing (manifest.sha256 lists it)")
        }
        for file in present.sorted() where listed[file] == nil {
            problems.append("\(directory)/\(file) is not in manifest.sha256: a history holds what it recorded, no more")
        }
        let checked = listed.keys.filter(present.contains).sorted()
        if !checked.isEmpty {
            // Its output in a directory of its own: nothing is ever written into a history.
            let scratch = try TemporaryDirectory("sha256")
            let sums = try ChildProcess(
                "/usr/bin/sha256sum", ["--"] + checked.map { directory + "/" + $0 }, directory: scratch.path,
                name: "sha256")
            guard await sums.exitCode() == 0 else {
                return problems + ["sha256sum failed in \(directory): \(sums.standardError)"]
            }
            for line in sums.standardOutput.split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                let file = String(parts[1].drop { $0 == " " }.dropFirst(directory.count + 1))
                if let recorded = listed[file], recorded != parts[0] {
                    problems.append(
                        "\(directory)/\(file) is damaged: its SHA-256 is \(parts[0]), manifest.sha256 says \(recorded)")
                }
            }
        }
        let files = listed.keys
        if !files.contains(where: { $0.hasPrefix("log/") && $0.hasSuffix(".seg") }) {
            problems.append("\(manifest) lists no segment (log/*.seg)")
        }
        if !files.contains("expected/replay-verify.txt") {
            problems.append("\(manifest) does not list expected/replay-verify.txt")
        }
        if !files.contains(where: { $0.hasPrefix("expected/") && $0.hasSuffix(".json") }) {
            problems.append("\(manifest) lists no read model (expected/*.json)")
        }
        return problems
    }

    @Test(arguments: Self.names)
    func aRecordedHistoryFoldsToTheReadModelsItWasRecordedWith(name: String) async throws {
        let history = Self.histories + "/" + name
        let log = history + "/log"
        let expected = history + "/expected"
        // Every file first: one missing or damaged fails here, named, rather than folding as absent.
        let problems = try await Self.problems(inHistory: history)
        try #require(problems.isEmpty, "\(problems.joined(separator: "\n"))")
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
        // Every read model at every position tools/record-history folds at: a file missing fails
        // here, naming it, rather than leaving that model or position unchecked.
        let stats = try await bureau.run(["log", "stats", "--json"])
        let last = try #require(
            (try? JSONSerialization.jsonObject(with: Data(stats.out.utf8)) as? [String: Any])?["last"] as? Int,
            "\(name): log stats --json gave no last position: \(stats.out) \(stats.err)")
        let positions = [last / 4, last / 2, 3 * last / 4, last]
        let recorder = try #require(Files.read(Self.recorder), "\(Self.recorder) cannot be read")
        let recordedModels = try #require(
            recorder.split(separator: "\n").first { $0.contains("for model in") }.map { line in
                line.split(separator: " ").drop { $0 != "in" }.dropFirst().prefix { $0 != "do" }.map {
                    String($0.trimmingCharacters(in: CharacterSet(charactersIn: ";")))
                }
            }, "\(Self.recorder) has no `for model in …` line")
        try #require(!recordedModels.isEmpty, "\(Self.recorder): its `for model in …` line names no model")
        let missing = recordedModels.flatMap { model in positions.map { "\(model)@\($0).json" } }
            .filter { !models.contains($0) }
        #expect(missing.isEmpty, "\(name): \(expected) lacks \(missing.joined(separator: ", "))")
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

    static let baseline =
        "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/Schemas/baseline/schemas.json"

    /// Every message type the released baseline defines, nested ones too, by full name.
    static func releasedTypes() throws -> Set<String> {
        let data = try #require(FileManager.default.contents(atPath: baseline), "\(baseline) is missing")
        let image = try #require(
            try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(baseline) is not a JSON object")
        let files = try #require(image["file"] as? [[String: Any]], "\(baseline) has no files")
        var names: Set<String> = []
        func walk(_ messages: [[String: Any]], in scope: String) {
            for message in messages {
                guard let name = message["name"] as? String else { continue }
                names.insert(scope + "." + name)
                walk(message["nestedType"] as? [[String: Any]] ?? [], in: scope + "." + name)
            }
        }
        for file in files {
            walk(file["messageType"] as? [[String: Any]] ?? [], in: file["package"] as? String ?? "")
        }
        return names
    }

    /// A recorded history is a log users could have: every type in it was released, so that
    /// `tools/check-schemas` holds its fields and names (Schemas/README.md, "Releasing a new
    /// baseline": a release comes before a history records a type, or with it).
    @Test(arguments: Self.names)
    func everyTypeARecordedHistoryHoldsIsInTheReleasedBaseline(name: String) async throws {
        let released = try Self.releasedTypes()
        try #require(!released.isEmpty, "\(Self.baseline) defines no type")
        let work = try TemporaryDirectory("history-types")
        try FileManager.default.copyItem(atPath: Self.histories + "/" + name + "/log", toPath: work.file("data/log"))
        let stats = try await BusProcess(directory: work.path, data: work.file("data")).run(["log", "stats", "--json"])
        let types = try #require(
            (try? JSONSerialization.jsonObject(with: Data(stats.out.utf8)) as? [String: Any])?["types"]
                as? [String: Any], "\(name): log stats --json gave no types: \(stats.out) \(stats.err)")
        try #require(!types.isEmpty, "\(name): its log holds no event")
        let unreleased = types.keys.filter { !released.contains($0) }.sorted()
        #expect(
            unreleased.isEmpty,
            """
            \(name) holds types the baseline \(Self.baseline) does not define: \(unreleased.joined(separator: ", ")); \
            release them with tools/check-schemas --release
            """)
    }

    /// Each kind of file a history holds, removed or damaged in a copy, fails naming the file.
    @Test func aHistoryWithAFileMissingOrDamagedFailsNamingIt() async throws {
        let source = Self.histories + "/2026-11-before-commission"
        let segment = "log/00000000000000000001.seg"
        func removing(_ file: String) -> (String) throws -> Void {
            { try FileManager.default.removeItem(atPath: $0 + "/" + file) }
        }
        let cases: [(String, String, (String) throws -> Void)] = [
            ("log/recovery-point", "is missing", removing("log/recovery-point")),
            (segment, "is missing", removing(segment)),
            (segment, "is damaged", { try Files.overwrite($0 + "/" + segment, at: 100, with: [0x5A]) }),
            ("log/00000000000000000001.idx", "is missing", removing("log/00000000000000000001.idx")),
            (
                "expected/reservations@97.json", "is damaged",
                { try Files.truncate($0 + "/expected/reservations@97.json", to: 10) }
            ),
            ("expected/replay-verify.txt", "is missing", removing("expected/replay-verify.txt")),
            ("log/stray.seg", "is not in manifest.sha256", { try Files.write($0 + "/log/stray.seg", "") }),
            ("manifest.sha256", "is missing", removing("manifest.sha256")),
        ]
        for (file, problem, damage) in cases {
            let work = try TemporaryDirectory("history-damage")
            let copy = work.file("history")
            try FileManager.default.copyItem(atPath: source, toPath: copy)
            #expect(try await Self.problems(inHistory: copy).isEmpty, "the copy itself")
            try damage(copy)
            let problems = try await Self.problems(inHistory: copy)
            #expect(
                problems.contains { $0.hasPrefix("\(copy)/\(file) \(problem)") }, "\(file): \(problems)")
        }
    }

    /// `log show` shows an old event as this build reads it and says it was upcast; `--raw` shows
    /// it as stored. The history from before commissions holds reservations in the old shape.
    @Test func logShowSaysAnOldEventWasUpcastAndRawShowsItAsStored() async throws {
        let work = try TemporaryDirectory("history-show")
        try FileManager.default.copyItem(
            atPath: Self.histories + "/2026-11-before-commission/log", toPath: work.file("data/log"))
        let bureau = BusProcess(directory: work.path, data: work.file("data"))
        let read = try await bureau.run(["log", "show", "--type", "bureau.reservations.ReservationAccepted"])
        let raw = try await bureau.run(["log", "show", "--raw", "--type", "bureau.reservations.ReservationAccepted"])
        let json = try await bureau.run(["log", "show", "--json", "--type", "bureau.reservations.ReservationAccepted"])
        #expect(read.code == 0 && raw.code == 0 && json.code == 0, "\(read.err) \(raw.err) \(json.err)")
        let readLines = read.out.split(separator: "\n")
        let rawLines = raw.out.split(separator: "\n")
        try #require(!readLines.isEmpty && readLines.count == rawLines.count, "\(read.out)\n\(raw.out)")
        for (shown, stored) in zip(readLines, rawLines) {
            #expect(
                shown.contains("bureau.reservations.ReservationAcceptedV2 {")
                    && shown.contains("\"commissionBasis\":\"BEFORE_COMMISSIONS\""))
            #expect(shown.hasSuffix("(upcast from bureau.reservations.ReservationAccepted)"), "\(shown)")
            #expect(stored.contains("bureau.reservations.ReservationAccepted {") && stored.contains("\"quoteAmount\""))
            #expect(!stored.contains("upcast"), "\(stored)")
        }
        #expect(
            json.out.split(separator: "\n").allSatisfy {
                $0.contains("\"upcastFrom\":\"bureau.reservations.ReservationAccepted\"")
            },
            "\(json.out)")
    }
}
