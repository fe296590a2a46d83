import BureauSchemas
import Bus
import EventLog
import Foundation
import LogTools
import TestSupport
import Testing
import ZeroMQBus

/// Repair after damage past the recovery point, whatever state the recovery point is in: a
/// power cut can leave it older than the data, and it can be lost or damaged like any file.
/// The daemon refuses to start; `bureau log repair` keeps every valid record, puts a
/// `RecordLost` (with the lost event's id) at the damaged position, and hands no position out
/// twice; after a restart every promise of RELIABILITY.md holds and a producer's retry of every
/// acknowledged id is answered DUPLICATE at its position.
// Starts, kills and stops daemons (their log opened and synced, their threads joined) again
// and again: on threads of its own, off the cooperative pool.
@Suite(.ownThreads)
struct RepairFaultTests {
    enum RecoveryPointState: String, CaseIterable, CustomTestStringConvertible {
        case stale, missing, damaged
        var testDescription: String { rawValue }
    }

    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case lastRecord, middleOfTheTail, atTheRecoveryPoint
        var testDescription: String { rawValue }
    }

    /// The byte offset of the record holding `id` at `position` in the segments of `directory`.
    static func locate(_ position: UInt64, id: EventID, in directory: String) throws -> (String, Int64) {
        let needle = id.bytes
        for name in Files.list(directory) where name.hasSuffix(".seg") {
            let path = directory + "/" + name
            let bytes = try #require(FileManager.default.contents(atPath: path)).map { $0 }
            var start = 0
            while start + 32 <= bytes.count {
                if bytes[start + 16..<start + 32].elementsEqual(needle),
                    bytes[start + 8..<start + 16].enumerated().reduce(UInt64(0), { $0 | UInt64($1.1) << (8 * $1.0) })
                        == position
                {
                    return (path, Int64(start))
                }
                start += 1
            }
        }
        throw TestSupportError("no record of \(id) at \(position) in \(directory)")
    }

    /// How the damaged record went bad.
    enum Harm: String, CustomTestStringConvertible {
        /// A byte of its envelope changed: the record is whole, its checksum fails.
        case flippedByte
        /// A sector in its middle reads as zeros and its end as written: what a disk that lost a
        /// sector leaves, and not a torn write, which leaves the file ending in zeros.
        case zeroedSector
        var testDescription: String { rawValue }
    }

    @Test(arguments: RecoveryPointState.allCases, Damage.allCases)
    func repairKeepsEveryAcknowledgedEventWhateverTheRecoveryPointSays(
        state: RecoveryPointState, damage: Damage
    ) async throws {
        try await exercise(state: state, damage: damage, harm: .flippedByte)
    }

    /// An acknowledged record past a stale or lost recovery point, the last of the log, with a
    /// sector of zeros in it: zeros are not taken for a torn write when written bytes follow them.
    @Test(arguments: RecoveryPointState.allCases)
    func aSectorOfZerosInTheLastAcknowledgedRecordIsNotCutAsATornWrite(state: RecoveryPointState) async throws {
        try await exercise(state: state, damage: .lastRecord, harm: .zeroedSector)
    }

    func exercise(state: RecoveryPointState, damage: Damage, harm: Harm) async throws {
        let run = try FaultRun(plan: nil)
        run.start(plan: nil)
        defer { run.stop() }
        let client = try run.client()
        defer { client.close() }
        // Events of 3,000 bytes hold whole sectors.
        let workload = harm == .zeroedSector ? FaultWorkload.make(bytes: 3000, seed: 31) : FaultWorkload.make(seed: 31)
        let recoveryPoint = run.location.logDirectory + "/recovery-point"
        var answers: [EventID: [FaultRun.Answer]] = [:]
        var envelopes: [EventID: Data] = [:]
        var failures: [String] = []
        var stale = Data()
        for (number, batch) in workload.batches.enumerated() {
            for event in batch { envelopes[event.id] = event.envelope }
            _ = try await workload.send(batch, number: number, with: client, answers: &answers, failures: &failures)
            // As a power cut can leave it: what it said half way through.
            if number == workload.batches.count / 2 {
                stale = try #require(FileManager.default.contents(atPath: recoveryPoint))
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        let acknowledged = answers.compactMapValues { $0.compactMap(\.position).first }
        let head = try #require(acknowledged.values.max())
        let point = stale.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian }
        #expect(point > 0 && point < head, "the recovery point kept aside is older than the data")

        // kill -9, then the state a power cut (or a bad disk) leaves.
        run.kill()
        switch state {
        case .stale: try stale.write(to: URL(fileURLWithPath: recoveryPoint))
        case .missing: unlink(recoveryPoint)
        case .damaged:
            var damaged = stale
            damaged[10] ^= 0x40
            try damaged.write(to: URL(fileURLWithPath: recoveryPoint))
        }
        let position: UInt64 =
            switch damage {
            case .lastRecord: head
            case .middleOfTheTail: (point + head) / 2
            case .atTheRecoveryPoint: point
            }
        let id = try #require(acknowledged.first { $0.value == position }?.key)
        let (segment, offset) = try Self.locate(position, id: id, in: run.location.logDirectory)
        switch harm {
        case .flippedByte:
            try Files.overwrite(segment, at: offset + 32 + 24, with: [0xA5])
        case .zeroedSector:
            let sector = (offset + 32 + 511) / 512 * 512
            try #require(sector + 512 + 64 < offset + 3000, "the record holds a whole sector and bytes after it")
            try Files.overwrite(segment, at: sector, with: [UInt8](repeating: 0, count: 512))
        }

        // The daemon refuses to start rather than cut it.
        let failedStarts = run.startFailures.count
        run.start(plan: nil)
        #expect(run.startFailures.count == failedStarts + 1, "the daemon started on a damaged log")
        #expect(run.startFailures.last?.contains("position \(position)") == true, "\(run.startFailures)")

        let report = try LogRepair.repair(directory: run.location.logDirectory, placeholder: LogRepair.recordLost)
        #expect(report.lost == [position...position], "\(report)")
        #expect(report.head == head, "no position is cut, none added")

        run.start(plan: nil)
        #expect(run.startFailures.count == failedStarts + 1, "the daemon did not start after the repair")
        var summary = FaultRun.Summary()
        failures += try await LogPromises.check(
            location: run.location, answers: answers, envelopes: envelopes, client: client, summary: &summary)
        for failure in failures { Issue.record("\(state), \(damage), \(harm): \(failure)") }
        var lost: [StoredEvent] = []
        try LogFiles.forEach(directory: run.location.logDirectory) { event in
            if event.type == Bureau_System_RecordLost.protoMessageName { lost.append(event) }
        }
        #expect(lost.map(\.position) == [position])
        #expect(lost.first?.id == id, "the placeholder answers for the lost event's id")
        // Publishing goes on after the head: no position is handed out twice.
        let next = try await client.publish(OutgoingEvent(type: FaultWorkload.type, payload: Data("after".utf8)))
        #expect(next == .committed(head + 1))
        print(
            "repair fault: recovery point \(state), \(harm) at \(damage) (position \(position) of \(head), "
                + "recovery point \(point)): refused at start, repaired with one RecordLost; \(summary.acknowledged) "
                + "acknowledged events checked: lost 0, doubled 0, positions reused 0; every retry DUPLICATE")
    }
}
