import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Synchronization
import TestSupport
import Testing
import ZeroMQBus

/// Tests that run `bureau bus` as a separate process, so that it can be killed.
@Suite(.timeLimit(.minutes(3)))
struct BusProcessTests {
    @Test func killNineWhilePublishingLosesNoAcknowledgedEventAndDuplicatesNone() async throws {
        let directory = try TemporaryDirectory("kill")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let client = try bus.client("producer", publishTimeout: .seconds(60))
        let acknowledged = Locked<[EventID]>([])
        let stop = StopFlag()
        let (progress, progressed) = AsyncStream.makeStream(of: Int.self)
        // Four producers publishing batches as fast as the bus acknowledges them.
        let producers = (0..<4).map { _ in
            Task {
                while !stop.isSet {
                    let batch = (0..<100).map { _ in
                        OutgoingEvent(type: "bureau.test.Happened", payload: Data(repeating: 7, count: 100))
                    }
                    let outcomes = try await client.publish(batch)
                    for outcome in outcomes where outcome.position == nil {
                        throw TestSupportError("rejected: \(outcome)")
                    }
                    let total = acknowledged.withLock { list in
                        list += batch.map(\.id)
                        return list.count
                    }
                    progressed.yield(total)
                }
            }
        }
        defer { stop.set() }  // however the test ends
        // Bounded: producers that failed, or a bus that no longer answers, yield nothing more.
        func waitForAcknowledged(atLeast count: Int, within timeout: Duration = .seconds(60)) async throws {
            let reached = await Timeout.result(within: timeout) { () async -> Bool in
                for await total in progress where total >= count { return true }
                return false
            }
            guard reached == true else {
                let total = acknowledged.withLock { $0.count }
                throw TestSupportError("\(total) events acknowledged within \(timeout), not \(count)")
            }
        }
        for round in 1...3 {
            try await waitForAcknowledged(atLeast: round * 3000)
            await bus.stop(SIGKILL)
            try await bus.start()
        }
        try await waitForAcknowledged(atLeast: 12_000)
        stop.set()
        for producer in producers { try await producer.value }
        client.close()
        #expect(await bus.stop(SIGTERM) == 0)

        let records = try bus.records()
        let ids = records.map(\.id)
        #expect(records.map(\.position) == Array(1...UInt64(records.count)), "positions run from 1 without holes")
        #expect(Set(ids).count == ids.count, "no event id appears twice")
        let missing = Set(acknowledged.withLock { $0 }).subtracting(ids)
        #expect(missing.isEmpty, "\(missing.count) acknowledged events are missing")
        let verify = try await bus.run(["log", "verify"])
        #expect(verify.code == 0, "\(verify.out)\(verify.err)")
    }

    @Test(arguments: ["cut", "cut at a record's end", "garbage"])
    func damageToAcknowledgedEventsStopsTheDaemonUntilARepairMovesItAside(damage: String) async throws {
        let directory = try TemporaryDirectory("tail")
        let bus = BusProcess(directory: directory.path)
        try await bus.start(["--segment-mib", "1"])
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "test"))
        for _ in 0..<10 {
            _ = try await client.publish(
                (0..<1000).map { _ in
                    OutgoingEvent(type: "bureau.test.Happened", payload: Data(repeating: 1, count: 120))
                })
        }
        client.close()
        await bus.stop()
        let segments = Files.list(bus.location.logDirectory).filter { $0.hasSuffix(".seg") }
        #expect(segments.count > 1)
        let newest = bus.location.logDirectory + "/" + (segments.last ?? "")
        let size = Files.size(newest)
        var generator = TestSeed.generator(for: "damaged segment (\(damage))")
        if damage == "cut" {
            try Files.truncate(newest, to: Int64.random(in: (size / 2)..<size, using: &generator))
        } else if damage == "cut at a record's end" {
            // Nothing torn is left to see: only the recovery point says that more was acknowledged.
            let cursor = try LogCursor(directory: bus.location.logDirectory, after: 9_699)
            #expect(try cursor.next()?.position == 9_700)
            try Files.truncate(newest, to: cursor.offset)
        } else {
            try Files.overwrite(
                newest, at: size - 50, with: (0..<50).map { _ in UInt8.random(in: 1...255, using: &generator) })
        }
        let before = try await bus.run(["log", "verify"])
        #expect(before.code == 1)
        #expect(before.out.contains("bad: position"), "\(before.out)")
        let show = try await bus.run(["log", "show"])
        #expect(show.code != 0, "a tool that could not read everything says so")
        #expect(show.err.contains(segments.last ?? "?"), "\(show.err)")

        // Every event was acknowledged: the daemon refuses to cut them, and says where and what to do.
        let refused = try await bus.start(waitUntilReady: false)
        #expect(await refused.exitCode() != 0)
        #expect(refused.standardError.contains("damaged at byte"), "\(refused.standardError)")
        #expect(refused.standardError.contains(segments.last ?? "?"))
        #expect(refused.standardError.contains("bureau log repair"))
        #expect(Files.size(newest) <= size, "nothing was cut")

        let repair = try await bus.run(["log", "repair"])
        #expect(repair.code == 0, "\(repair.out)\(repair.err)")
        #expect(repair.out.contains("RecordLost placeholder"), "\(repair.out)")
        #expect(repair.out.contains("kept:"))
        let damaged = Files.list(bus.location.logDirectory).filter { $0.hasPrefix("damaged-") }
        #expect(damaged.count == 1)
        #expect(Files.list(bus.location.logDirectory + "/" + (damaged.first ?? "")).contains(segments.last ?? "?"))

        try await bus.start()
        let records = try bus.records()
        await bus.stop()
        #expect(records.map(\.position) == Array(1...10_000), "positions stay contiguous; none is reused")
        let after = try await bus.run(["log", "verify"])
        #expect(after.code == 0, "\(after.out)\(after.err)")
        #expect(after.out.contains("ok: 10000 records"))
        let lost = try await bus.run(["log", "show", "--type", "bureau.system.RecordLost"])
        #expect(lost.code == 0)
        #expect(!lost.out.isEmpty)
    }

    @Test func aSecondDaemonProcessRefusesAndNamesTheFirst() async throws {
        let directory = try TemporaryDirectory("two")
        let bus = BusProcess(directory: directory.path)
        let first = try await bus.start()
        let second = try ChildProcess(
            BureauExecutable.path, ["bus", "--data", bus.location.dataDirectory], directory: directory.path,
            name: "second")
        #expect(await second.exitCode() == 1)
        #expect(second.standardError.contains("in use by process \(first.pid)"), "\(second.standardError)")
        #expect(second.standardError.contains("bureau bus"))
        // The first one still answers.
        try await BusProcess.waitUntilReady(bus.location, child: first, timeout: .seconds(5))
        #expect(await bus.stop() == 0)
    }

    @Test func sigtermStopsTheDaemonCleanlyWithEverythingDurable() async throws {
        let directory = try TemporaryDirectory("term")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "test"))
        let outcomes = try await client.publish(
            (0..<500).map { _ in OutgoingEvent(type: "bureau.test.Happened", payload: Data("x".utf8)) })
        client.close()
        #expect(await bus.stop(SIGTERM) == 0)
        #expect(try bus.records().count == outcomes.count)
        #expect(!FileManager.default.fileExists(atPath: bus.location.infoFile), "bus.json is removed")
    }
}
