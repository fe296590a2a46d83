import BureauSchemas
import Bus
import BusTesting
import EventLog
import Foundation
import LogTools
import Runtime
import Synchronization
import TestSupport
import ZeroMQBus

/// What the log promises a producer, checked against the answers it got: every event
/// acknowledged COMMITTED or DUPLICATE is in the log once, at that position; none answered
/// REJECTED is (nor found a duplicate when sent again); positions are contiguous; every
/// acknowledged id sent again answers DUPLICATE with its position; and `log show`, an export,
/// catch-up reads and replay all see the same events.
enum LogPromises {
    /// The positions and ids whose record's export was read back, in every run of this process
    /// so far. Not the records: the runs write the same workload again and again, and the same
    /// event's record differs from run to run only in its commit time, which lies past the first
    /// 80 bytes a `Data` hashes; a set of records put every run's at one position in one bucket.
    private static let exportsChecked = Mutex<Set<ExportKey>>([])

    private struct ExportKey: Hashable {
        var position: UInt64
        var id: EventID
    }

    /// Every promise the log makes, checked against the answers the producer got.
    static func check(
        location: BusLocation, answers: [EventID: [FaultRun.Answer]], envelopes: [EventID: Data],
        client: ZeroMQBusClient,
        summary: inout FaultRun.Summary
    ) async throws -> [String] {
        var failures: [String] = []

        // What the log holds, read from its files as `log show` does.
        var events: [StoredEvent] = []
        var records: [LogRecord] = []
        do {
            try LogFiles.scan(directory: location.logDirectory) { event, record in
                events.append(event)
                records.append(record)
                return true
            }
        } catch {
            failures.append("the log cannot be read: \(error)")
            return failures
        }
        if events.map(\.position) != Array(0..<UInt64(events.count)).map({ $0 + 1 }) {
            failures.append("positions are not 1…\(events.count): \(events.map(\.position))")
        }
        var positions: [EventID: [UInt64]] = [:]
        for event in events { positions[event.id, default: []].append(event.position) }
        for (id, found) in positions where found.count > 1 {
            failures.append("\(id) is in the log \(found.count) times: \(found)")
        }
        // The daemon's own reports (a full disk that passed, a repaired tail) are its to write.
        let reports = Set(events.filter(\.isBusReport).map(\.id))
        for id in positions.keys where answers[id] == nil && !reports.contains(id) {
            failures.append("\(id) is in the log but was never sent")
        }
        for (id, list) in answers {
            // REJECTED means not stored: the next acknowledgement of the same id is a commit,
            // never a duplicate of something the bus said it had not stored.
            for (earlier, later) in zip(list, list.dropFirst()) {
                if case .rejected = earlier, case .duplicate = later {
                    failures.append("\(id) was rejected, then sent again and found a duplicate: \(list)")
                }
            }
            let acknowledged = Set(list.compactMap(\.position))
            if acknowledged.count > 1 { failures.append("\(id) was acknowledged at several positions: \(list)") }
            if let position = acknowledged.first {
                summary.acknowledged += 1
                if positions[id] != [position] {
                    failures.append(
                        "\(id) was acknowledged at \(position) but the log has it at \(positions[id] ?? [])")
                }
            } else {
                summary.rejected += 1
                if let found = positions[id] {
                    failures.append("\(id) was rejected (\(list)) but is in the log at \(found)")
                }
            }
        }
        let verified = try LogVerifier.verify(directory: location.logDirectory)
        if !verified.ok { failures.append("log verify: \(verified.problems)") }

        // Every acknowledged id is recognised when it is sent again.
        let acknowledged = answers.compactMap { id, list in list.compactMap(\.position).first.map { (id, $0) } }
        for chunk in stride(from: 0, to: acknowledged.count, by: 64).map({
            acknowledged[$0..<min($0 + 64, acknowledged.count)]
        }) {
            let ack = try await client.publish(envelopes: chunk.compactMap { envelopes[$0.0] })
            for ((id, position), result) in zip(chunk, ack.results)
            where result.status != .duplicate || result.position != position {
                failures.append("\(id), acknowledged at \(position), sent again: \(result.status) \(result.position)")
            }
        }

        // Catch-up reads see what the files hold.
        let filed = UInt64(events.count)
        let delivered = try await client.collect(
            until: .now + .seconds(60), onCaughtUp: { $0.head >= filed }, done: { _ in false })
        if delivered != events {
            failures.append("catch-up delivered \(delivered.count) events that differ from the files")
        }

        // An export reads back as the same records: each event once in the whole suite, the
        // runs writing the same workload's records again and again (checking each again was half
        // of the suite's time, for no shape of record it had not read back already).
        for (event, record) in zip(events, records)
        where exportsChecked.withLock({ $0.insert(ExportKey(position: record.position, id: record.id)).inserted }) {
            let line = LogExchange.line(event, envelope: record.body)
            if (try? LogExchange.record(from: Array(line.utf8), expecting: record.position)) != record {
                failures.append("the export of position \(record.position) does not read back as its record")
                break
            }
        }

        // Replay folds the same events.
        let replay = LogReplay(reducers: [], projections: [AnyProjection(FaultTally())])
        try LogFiles.forEach(directory: location.logDirectory) { replay.apply($0) }
        let live = AnyProjection(FaultTally()).fold()
        for event in delivered { live.apply(event) }
        if try replay.snapshot().projection("fault-tally")?.value != JSONValue(parsing: try live.json()) {
            failures.append("replay's fold differs from the catch-up's")
        }
        return failures
    }
}

extension StoredEvent {
    /// An `ErrorRaised` the bus daemon wrote about itself.
    var isBusReport: Bool { producerModule == "bus" && type == Bureau_System_ErrorRaised.protoMessageName }
}
