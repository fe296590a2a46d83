import AlertsFeature
import Bus
import ConverterFeature
import EventLog
import Foundation
import Guards
import LogTools
import ReservationsFeature
import Runtime
import TestSupport
import Testing
import WatchlistFeature

/// `bureau replay`, `log export`, `log import` and `log show --correlation` on a session that a
/// real bus and a real reducer host recorded.
@Suite(.timeLimit(.minutes(3)))
struct ReplayCommandTests {
    @Test func verifyPassesOnARecordedSessionAndCountsWhatItCompared() async throws {
        let session = try await RecordedSession.record(requests: 120)
        let text = try await session.bus.run(["replay", "--verify"])
        #expect(text.code == 0, "\(text.out)\(text.err)")
        #expect(text.out.contains("ok: \(session.events.count) events read"))
        let result = try await session.bus.run(["replay", "--verify", "--json"])
        #expect(result.code == 0)
        let document = try JSONValue(parsing: result.out)
        #expect(document["ok"] == .bool(true))
        guard case .array(let modules)? = document["modules"] else {
            Issue.record("no modules in \(result.out)")
            return
        }
        #expect(
            modules.compactMap { $0["module"] }
                == ["watchlist", "converter", "reservations", "alerts"].map { .string($0) })
        for module in modules {
            guard case .string(let name)? = module["module"] else { continue }
            let recorded = session.events.filter { $0.producerModule == name }.count
            #expect(module["outputsCompared"] == .integer(recorded), "\(name)")
            #expect(module["unpublished"] == .integer(0), "\(name)")
        }
    }

    @Test func aChangedReducerFailsVerificationAtTheRightPositionWithBothEvents() async throws {
        let session = try await RecordedSession.record(requests: 120)
        // The first accepted reservation: a changed reducer quotes one cent more.
        let accepted = try #require(session.events.first { $0.type == ReservationAcceptedV2.protoMessageName })
        let changed = AlteredReducer(inner: ReservationsReducer(), at: accepted.causation) { outputs in
            outputs.map { output in
                guard var message = output.message as? ReservationAcceptedV2 else { return output }
                message.grossAmount += "1"
                return Emitted(message)
            }
        }
        let reducers: [any Reducer] = [WatchlistReducer(), ConverterReducer(), changed, AlertsReducer()]
        let divergence = try #require(ReplayVerifier.verify(reducers: reducers, events: session.events).divergence)
        #expect(divergence.kind == .different)
        #expect(divergence.module == "reservations")
        #expect(divergence.position == accepted.position)
        #expect(divergence.inputPosition == accepted.causation)
        #expect(divergence.recorded == accepted)
        #expect(divergence.differences.map(\.path) == ["payload.grossAmount"])
        #expect(divergence.description.contains("recorded:    {\"position\":\(accepted.position)"))
        #expect(divergence.description.contains("re-computed: {\"id\":\"\(accepted.id)\""))
        // Today's reducers still agree with the same log.
        let today: [any Reducer] = [WatchlistReducer(), ConverterReducer(), ReservationsReducer(), AlertsReducer()]
        #expect(ReplayVerifier.verify(reducers: today, events: session.events).divergence == nil)
    }

    @Test func replayToAPositionEqualsTheStateTheHostsSnapshotHeldThere() async throws {
        let session = try await RecordedSession.record(requests: 120)
        let store = FileSnapshotStore(directory: session.bus.location.snapshotDirectory)
        func check<R: Reducer>(_ reducer: R) async throws {
            let snapshot = try #require(
                store.load(R.State.self, module: reducer.module, stateVersion: reducer.stateVersion, rejected: { _ in })
            )
            let result = try await session.bus.run([
                "replay", "--to", "\(snapshot.position)", "--module", reducer.module, "--json",
            ])
            #expect(result.code == 0, "\(result.err)")
            let document = try JSONValue(parsing: result.out)
            #expect(document["position"] == .integer(snapshot.position))
            let state = try #require(document["modules"]?[reducer.module]?["state"])
            let replayed = try JSONDecoder().decode(R.State.self, from: Data(state.description.utf8))
            #expect(replayed == snapshot.state, "\(reducer.module) at \(snapshot.position)")
        }
        try await check(WatchlistReducer())
        try await check(ConverterReducer())
        try await check(ReservationsReducer())
        try await check(AlertsReducer())
        // A read model replayed to a position is what `bureau show --at` folds there.
        let middle = session.events.count / 2
        let replayed = try await session.bus.run(["replay", "--to", "\(middle)", "--module", "reservations", "--json"])
        let shown = try await session.bus.run(["show", "reservations", "--at", "\(middle)", "--json"])
        #expect(
            try JSONValue(parsing: replayed.out)["projections"]?["reservations"] == JSONValue(parsing: shown.out))
        let text = try await session.bus.run(["replay", "--to", "\(middle)"])
        #expect(text.out.contains("replayed \(middle) events, up to position \(middle)"))
        #expect(text.out.contains("== watchlist: reducer state"))
        #expect(text.out.contains("== read model reservations =="))
    }

    @Test func exportThenImportThenReplayGivesTheSameState() async throws {
        let session = try await RecordedSession.record(requests: 120)
        let exported = try await session.bus.run(["log", "export"])
        #expect(exported.code == 0, "\(exported.err)")
        let lines = exported.out.split(separator: "\n")
        #expect(lines.count == session.events.count)
        let file = session.directory.file("excerpt.jsonl")
        try exported.out.write(toFile: file, atomically: true, encoding: .utf8)

        let copy = BusProcess(directory: session.directory.path, data: session.directory.file("copy"))
        let imported = try await copy.run(["log", "import", file])
        #expect(imported.code == 0, "\(imported.err)")
        #expect(imported.out.contains("imported \(session.events.count) events"))
        #expect(try copy.records() == session.bus.records(), "the same records, byte for byte")

        let original = try await session.bus.run(["replay", "--json"])
        let again = try await copy.run(["replay", "--json"])
        let before = try JSONValue(parsing: original.out)
        let after = try JSONValue(parsing: again.out)
        #expect(after["position"] == before["position"])
        #expect(after["projections"] == before["projections"])
        func state<R: Reducer>(_ reducer: R, in document: JSONValue) throws -> R.State {
            let state = try #require(document["modules"]?[reducer.module]?["state"])
            return try JSONDecoder().decode(R.State.self, from: Data(state.description.utf8))
        }
        #expect(try state(WatchlistReducer(), in: after) == state(WatchlistReducer(), in: before))
        #expect(try state(ConverterReducer(), in: after) == state(ConverterReducer(), in: before))
        #expect(try state(ReservationsReducer(), in: after) == state(ReservationsReducer(), in: before))
        #expect(try state(AlertsReducer(), in: after) == state(AlertsReducer(), in: before))
        #expect(try await copy.run(["replay", "--verify"]).code == 0)

        // A line without its envelope is built from its fields: here, a tampered answer, which
        // verification then finds.
        let index = try #require(session.events.firstIndex { $0.type == PairAdded.protoMessageName })
        let answer = session.events[index]
        var edited = lines.map(String.init)
        edited[index] = answer.jsonLine.replacingOccurrences(of: "\"quote\":\"", with: "\"quote\":\"X")
        let tampered = session.directory.file("tampered.jsonl")
        try edited.joined(separator: "\n").write(toFile: tampered, atomically: true, encoding: .utf8)
        let other = BusProcess(directory: session.directory.path, data: session.directory.file("tampered"))
        #expect(try await other.run(["log", "import", tampered]).code == 0)
        let verified = try await other.run(["replay", "--verify"])
        #expect(verified.code == 1)
        #expect(verified.out.contains("divergence at position \(answer.position), module watchlist"))
        #expect(verified.out.contains("payload.quote: \"X"))
    }

    @Test func importRefusesANonEmptyDirectoryAndNamesABadLineWritingNothing() async throws {
        let session = try await RecordedSession.record(requests: 120)
        let exported = try await session.bus.run(["log", "export", "--to", "5"])
        var lines = exported.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        let good = session.directory.file("good.jsonl")
        try lines.joined(separator: "\n").write(toFile: good, atomically: true, encoding: .utf8)

        let existing = try await session.bus.run(["log", "import", good])
        #expect(existing.code != 0)
        #expect(existing.err.contains("is not empty"))

        lines[3] = "{\"position\": 4, \"type\": "
        let bad = session.directory.file("bad.jsonl")
        try lines.joined(separator: "\n").write(toFile: bad, atomically: true, encoding: .utf8)
        let target = BusProcess(directory: session.directory.path, data: session.directory.file("new"))
        let refused = try await target.run(["log", "import", bad])
        #expect(refused.code != 0)
        #expect(refused.err.contains("bad.jsonl line 4: not JSON"))
        #expect(!FileManager.default.fileExists(atPath: target.location.dataDirectory), "nothing half-written")

        let excerpt = try await session.bus.run(["log", "export", "--from", "3", "--to", "5"])
        try excerpt.out.write(toFile: bad, atomically: true, encoding: .utf8)
        let late = try await target.run(["log", "import", bad])
        #expect(late.err.contains("line 1: the first event is at position 3; an import starts at position 1"))
        #expect(!FileManager.default.fileExists(atPath: target.location.dataDirectory))

        // Line 5 is the event of line 2 again, at position 5: an id is committed once.
        lines = exported.out.split(separator: "\n").map(String.init)
        lines[4] = session.events[1].jsonLine.replacingOccurrences(of: "\"position\":2,", with: "\"position\":5,")
        try lines.joined(separator: "\n").write(toFile: bad, atomically: true, encoding: .utf8)
        let repeated = try await target.run(["log", "import", bad])
        #expect(repeated.code != 0)
        #expect(
            repeated.err.contains("bad.jsonl line 5: event id \(session.events[1].id) repeats the id of line 2"),
            "\(repeated.err)")
        #expect(!FileManager.default.fileExists(atPath: target.location.dataDirectory), "nothing imported")
    }

    @Test func verifyReportsAnIdThatALogHoldsTwice() async throws {
        let session = try await RecordedSession.record(requests: 20)
        let exported = try await session.bus.run(["log", "export", "--to", "6"])
        // Two logs' excerpts joined by hand: the event of position 2 is again at position 6.
        var lines = exported.out.split(separator: "\n").map(String.init)
        lines[5] = session.events[1].jsonLine.replacingOccurrences(of: "\"position\":2,", with: "\"position\":6,")
        let target = BusProcess(directory: session.directory.path, data: session.directory.file("joined"))
        let records = try lines.enumerated().map { index, line in
            try LogExchange.record(from: Array(line.utf8), expecting: UInt64(index + 1))
        }
        try await OwnThread.run(name: "test-write") {
            let written = try FileEventLog(directory: target.location.logDirectory)
            try written.append(records)
            try written.commit()
            try written.close()
        }
        let verified = try await target.run(["log", "verify"])
        #expect(verified.code == 1)
        #expect(
            verified.out.contains("bad: event id \(session.events[1].id) occurs 2 times: at 2, 6"), "\(verified.out)")
    }

    @Test func showByCorrelationPrintsTheWholeChainOfOneIntent() async throws {
        let session = try await RecordedSession.record(requests: 120)
        let request = try #require(
            session.requests.first { request in
                session.events.contains {
                    $0.correlation == request.id && $0.type == ReservationAcceptedV2.protoMessageName
                }
            })
        let chain = session.events.filter { $0.id == request.id || $0.correlation == request.id }
        #expect(chain.count >= 2)
        let shown = try await session.bus.run(["log", "show", "--correlation", "\(request.id)"])
        #expect(shown.code == 0)
        let lines = shown.out.split(separator: "\n")
        #expect(lines.count == chain.count)
        #expect(lines.first?.hasPrefix("\(chain[0].position) ") == true)
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("  ") }, "answers are indented under their cause")
        let json = try await session.bus.run(["log", "show", "--correlation", "\(request.id)", "--json"])
        #expect(json.out.split(separator: "\n").count == chain.count)
        let bad = try await session.bus.run(["log", "show", "--correlation", "nope"])
        #expect(bad.code == 64)
    }
}
