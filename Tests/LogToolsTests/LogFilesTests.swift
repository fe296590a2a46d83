import Bus
import BusTesting
import EventLog
import Foundation
import LogTools
import TestSupport
import Testing

/// Reading a log's files for the tools: every event once, in order, across the read-ahead's
/// chunks; a record that is not an envelope is an error after every event before it. Off the
/// cooperative pool: writing and reading back their logs is seconds of a debug build's work.
@Suite(.ownThreads)
struct LogFilesTests {
    /// A log of `count` events, the one at `bad` (if given) a record whose body is not an envelope.
    static func log(count: Int, bad: UInt64? = nil) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory("log-files")
        var options = FileEventLog.Options()
        options.durability = .never
        let log = try FileEventLog(directory: directory.path, options: options)
        var batch: [LogRecord] = []
        for position in 1...UInt64(count) {
            let event = StoredEvent(
                position: position, id: .random(), type: "bureau.test.Happened",
                commitTime: CommitTime(seconds: 1_793_000_000, nanos: 0), payload: Data(repeating: 7, count: 100))
            let body = position == bad ? Data([0xFF, 0xFF, 0xFF]) : try event.envelope().serializedData()
            batch.append(LogRecord(position: position, id: event.id, body: body))
        }
        try log.append(batch)
        try log.close()
        return directory
    }

    @Test func everyEventComesOnceInOrderWithItsRecordAcrossManyChunks() throws {
        let directory = try Self.log(count: 10_000)
        var positions: [UInt64] = []
        var recordsMatch = true
        try LogFiles.scan(directory: directory.path) { event, record in
            positions.append(event.position)
            let again = try StoredEvent(envelopeBytes: record.body)
            recordsMatch = recordsMatch && again == event
            return true
        }
        #expect(positions == Array(1...10_000))
        #expect(recordsMatch)
    }

    @Test func aRangeAndAnEarlyStopAreKept() throws {
        let directory = try Self.log(count: 10_000)
        var ranged: [UInt64] = []
        try LogFiles.scan(directory: directory.path, from: 2_500, to: 7_500) { event, _ in
            ranged.append(event.position)
            return true
        }
        var stopped: [UInt64] = []
        try LogFiles.scan(directory: directory.path) { event, _ in
            stopped.append(event.position)
            return event.position < 4_100
        }
        #expect(ranged == Array(2_500...7_500))
        #expect(stopped == Array(1...4_100))
    }

    @Test func aRecordThatIsNotAnEnvelopeIsAnErrorNamingItAfterEveryEventBeforeIt() throws {
        let directory = try Self.log(count: 10_000, bad: 6_000)
        var positions: [UInt64] = []
        let error = #expect(throws: LogToolError.self) {
            try LogFiles.scan(directory: directory.path) { event, _ in
                positions.append(event.position)
                return true
            }
        }
        #expect(positions == Array(1...5_999))
        #expect(error?.description.contains("position 6000") == true)
    }
}
