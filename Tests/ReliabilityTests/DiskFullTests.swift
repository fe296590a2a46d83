import BureauSchemas
import Bus
import EventLog
import Foundation
import LogTools
import TestSupport
import Testing
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// A real full disk: a 2 MiB tmpfs, `bureau bus --segment-mib 1`, a filler file, then batches
/// of 50 events of 200 bytes until the disk is full at a segment roll (the case that lied
/// before). Needs root to mount the tmpfs; without it the test says so and is skipped.
@Suite(
    .timeLimit(.minutes(3)), .ownThreads, .enabled(if: Tmpfs.canMount, "needs root (or CAP_SYS_ADMIN) to mount a tmpfs")
)
struct DiskFullTests {
    @Test func aFullDiskAtASegmentRollRefusesPublishesKeepsTheLogTrueAndResumesOnceThereIsSpace() async throws {
        let directory = try TemporaryDirectory("full")
        let mount = try Tmpfs(directory.file("disk"), megabytes: 2)
        defer { mount.unmount() }
        let bus = BusProcess(directory: directory.path, data: mount.path + "/data")
        try await bus.start(["--segment-mib", "1"])
        // Leave about 1.3 MiB: the first segment fills, and the disk fills after the roll.
        let filler = mount.path + "/filler"
        try Files.write(filler, String(repeating: "x", count: Int(mount.free) - 1_350_000))

        let client = try bus.client("full", publishTimeout: .seconds(30))
        let workload = FaultWorkload.make(count: 400, size: 50, bytes: 200, seed: 3)
        var answers: [EventID: [FaultRun.Answer]] = [:]
        var envelopes: [EventID: Data] = [:]
        var failures: [String] = []
        var refusals = 0
        var next = 0
        // Until the disk has refused several batches in a row.
        while next < workload.batches.count, refusals < 5 {
            let batch = workload.batches[next]
            for event in batch { envelopes[event.id] = event.envelope }
            if try await workload.send(batch, number: next, with: client, answers: &answers, failures: &failures) {
                refusals += 1
            }
            next += 1
        }
        #expect(refusals == 5, "the disk never filled")
        #expect(Files.list(bus.location.logDirectory).filter { $0.hasSuffix(".seg") }.count >= 2, "a segment rolled")
        var summary = FaultRun.Summary()
        failures += try await LogPromises.check(
            location: bus.location, answers: answers, envelopes: envelopes, client: client, summary: &summary
        ).map { "with the disk full: \($0)" }

        // Killed while the disk is full, it starts again on the full disk: it refuses publishes as
        // disk full and serves reads.
        await bus.stop(SIGKILL)
        // Full: less room than the next batch needs (its envelopes alone; each record adds a
        // header). A few blocks may come free as the killed daemon's files close (three did once,
        // which a bound of three blocks took for a disk with room); the publish below is what
        // must be refused.
        let batch = workload.batches[next]
        let needed = batch.reduce(0) { $0 + $1.envelope.count }
        #expect(
            mount.free < Int64(needed), "the disk is still full: \(mount.free) bytes free, the batch needs \(needed)")
        let restarted = try await bus.start(["--segment-mib", "1"])
        for event in batch { envelopes[event.id] = event.envelope }
        #expect(
            try await workload.send(batch, number: next, with: client, answers: &answers, failures: &failures),
            "a publish on the full disk is refused as disk full")
        next += 1
        failures += try await LogPromises.check(
            location: bus.location, answers: answers, envelopes: envelopes, client: client, summary: &summary
        ).map { "after a kill on the full disk: \($0)" }
        #expect(!restarted.standardError.contains("critical"), "\(restarted.standardError)")

        // Space again: accepting resumes, without a restart.
        unlink(filler)
        for number in next..<(next + 5) {
            let batch = workload.batches[number]
            for event in batch { envelopes[event.id] = event.envelope }
            if try await workload.send(batch, number: number, with: client, answers: &answers, failures: &failures) {
                failures.append("batch \(number) was refused after the space was freed")
            }
        }
        failures += try await LogPromises.check(
            location: bus.location, answers: answers, envelopes: envelopes, client: client, summary: &summary
        ).map { "once there was space: \($0)" }
        // The bus said, on the bus, that it had refused publishes for a full disk.
        var reports: [String] = []
        try LogFiles.scan(directory: bus.location.logDirectory) { event, _ in
            if event.isBusReport, let raised = try? event.payload(as: Bureau_System_ErrorRaised.self) {
                reports.append("\(raised.code): \(raised.message)")
            }
            return true
        }
        #expect(reports.count == 1 && reports[0].hasPrefix("disk-full: "), "\(reports)")
        #expect(reports.first?.contains("request(s) were refused") == true, "\(reports)")

        // And after a crash, nothing refused comes back.
        await bus.stop(SIGKILL)
        try await bus.start(["--segment-mib", "1"])
        summary = FaultRun.Summary()
        failures += try await LogPromises.check(
            location: bus.location, answers: answers, envelopes: envelopes, client: client, summary: &summary
        ).map { "after kill -9 and a restart: \($0)" }
        client.close()
        await bus.stop()
        for failure in failures { Issue.record("\(failure)") }
        print(
            "disk full: \(refusals) batches refused on a full 2 MiB tmpfs across a segment roll; "
                + "\(summary.acknowledged) acknowledged and \(summary.rejected) rejected events checked, with the disk "
                + "full, once there was space, and after kill -9 and a restart")
    }
}
