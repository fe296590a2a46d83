import EventLog
import Foundation
import Guards
import InMemoryStores
import PostgresStore
import TestSupport
import Testing

/// The behaviour every ``EventLog`` must have, run against the file log, its in-memory twin and
/// the PostgreSQL store (where a server can be started; elsewhere its cases are skipped, saying why).
// Writes, syncs and reads files without end: on threads of its own, off the cooperative pool.
@Suite(.ownThreads)
struct EventLogContractTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case file, memory, postgres
        var testDescription: String { rawValue }
    }

    /// A log of the given kind, with what keeps it alive.
    final class Subject {
        let log: any EventLog
        let directory: TemporaryDirectory?
        init(_ kind: Kind) async throws {
            switch kind {
            case .file:
                let directory = try TemporaryDirectory("log")
                self.directory = directory
                log = try FileEventLog(directory: directory.file("log"))
            case .memory:
                directory = nil
                log = InMemoryEventLog()
            case .postgres:
                // Where there is no server, the case is a skip that says why.
                try await TestPostgres.skipIfUnavailable()
                directory = nil
                log = try PostgresEventLog(
                    url: PostgresStoreURL(parsing: try TestPostgres.database()),
                    logger: TestLogging.logger("bureau.log"))
            }
        }
    }

    static func records(_ positions: ClosedRange<UInt64>) -> [LogRecord] {
        positions.map { LogRecord(position: $0, id: EventID.random(), body: Data("event \($0)".utf8)) }
    }

    @Test(arguments: Kind.allCases)
    func aNewLogIsEmpty(kind: Kind) async throws {
        let subject = try await Subject(kind)
        #expect(subject.log.head == 0)
        #expect(subject.log.lastRecord == nil)
        #expect(try subject.log.makeReader().read(after: 0, through: 100, limit: 10, maxBytes: 1000).isEmpty)
    }

    @Test(arguments: Kind.allCases)
    func appendedRecordsAreReadBackInOrder(kind: Kind) async throws {
        let subject = try await Subject(kind)
        let records = Self.records(1...50)
        try subject.log.append(Array(records[0..<20]))
        try subject.log.append(Array(records[20...]))
        try subject.log.commit()
        #expect(subject.log.head == 50)
        #expect(subject.log.lastRecord == records.last)
        let reader = try subject.log.makeReader()
        #expect(try reader.read(after: 0, through: 50, limit: 100, maxBytes: 1 << 20) == records)
        #expect(try reader.read(after: 10, through: 50, limit: 5, maxBytes: 1 << 20) == Array(records[10..<15]))
        #expect(try reader.read(after: 40, through: 45, limit: 100, maxBytes: 1 << 20) == Array(records[40..<45]))
    }

    @Test(arguments: Kind.allCases)
    func readsStopAtTheByteBudget(kind: Kind) async throws {
        let subject = try await Subject(kind)
        try subject.log.append(Self.records(1...10))
        let read = try subject.log.makeReader().read(after: 0, through: 10, limit: 100, maxBytes: 1)
        #expect(read.count == 1)
    }

    @Test(arguments: Kind.allCases)
    func anAppendThatDoesNotContinueThePositionsIsRefused(kind: Kind) async throws {
        let subject = try await Subject(kind)
        try subject.log.append(Self.records(1...3))
        #expect(throws: EventLogError.positionOutOfOrder(expected: 4, got: 5)) {
            try subject.log.append(Self.records(5...5))
        }
        #expect(subject.log.head == 3)
    }

    @Test(arguments: Kind.allCases)
    func recentIDsAreRememberedWithTheirPositions(kind: Kind) async throws {
        let subject = try await Subject(kind)
        let records = Self.records(1...5)
        try subject.log.append(records)
        #expect(subject.log.position(of: records[3].id) == 4)
        #expect(subject.log.position(of: EventID.random()) == nil)
    }

    @Test(arguments: Kind.allCases)
    func aReaderSeesRecordsAppendedAfterItWasMade(kind: Kind) async throws {
        let subject = try await Subject(kind)
        let reader = try subject.log.makeReader()
        try subject.log.append(Self.records(1...3))
        #expect(try reader.read(after: 0, through: 3, limit: 10, maxBytes: 1 << 20).map(\.position) == [1, 2, 3])
        try subject.log.append(Self.records(4...6))
        #expect(try reader.read(after: 3, through: 6, limit: 10, maxBytes: 1 << 20).map(\.position) == [4, 5, 6])
    }

    @Test(arguments: Kind.allCases)
    func anOversizedRecordIsRefused(kind: Kind) async throws {
        let subject = try await Subject(kind)
        let big = LogRecord(position: 1, id: .random(), body: Data(count: (16 << 20) + 1))
        #expect(throws: EventLogError.self) { try subject.log.append([big]) }
        #expect(subject.log.head == 0)
    }

    /// The records as one batch, their bodies in one buffer after some bytes that belong to none.
    static func batch(_ records: [LogRecord]) -> RecordBatch {
        var batch = RecordBatch()
        for record in records { batch.append(position: record.position, id: record.id, body: record.body) }
        return batch
    }

    @Test(arguments: Kind.allCases)
    func aBatchOfRecordsSharingOneBufferIsStoredAsTheSameRecordsAppendedOneByOne(kind: Kind) async throws {
        let subject = try await Subject(kind)
        let records = Self.records(1...30)
        try subject.log.append(Array(records[0..<10]))
        var batch = Self.batch(Array(records[10..<25]))
        try subject.log.append(batch)
        // A batch emptied and filled again, as the bus reuses one.
        batch.removeAll()
        batch = Self.batch(Array(records[25...]))
        try subject.log.append(batch)
        try subject.log.commit()

        #expect(subject.log.head == 30)
        #expect(subject.log.lastRecord == records.last)
        #expect(try subject.log.makeReader().read(after: 0, through: 30, limit: 100, maxBytes: 1 << 20) == records)
        let expected: [UInt64?] = (1...30).map { UInt64($0) }
        #expect(subject.log.positions(of: records.map(\.id)) == expected)
    }

    @Test(arguments: Kind.allCases)
    func aBatchThatDoesNotContinueThePositionsOrHoldsAnOversizedRecordIsRefusedWhole(kind: Kind) async throws {
        let subject = try await Subject(kind)
        try subject.log.append(Self.batch(Self.records(1...3)))
        let skipping = Self.records(4...6).map {
            LogRecord(position: $0.position + ($0.position == 6 ? 1 : 0), id: $0.id, body: $0.body)
        }
        #expect(throws: EventLogError.positionOutOfOrder(expected: 6, got: 7)) {
            try subject.log.append(Self.batch(skipping))
        }
        var oversized = Self.batch(Self.records(4...5))
        oversized.append(position: 6, id: .random(), body: Data(count: (16 << 20) + 1))
        #expect(throws: EventLogError.self) { try subject.log.append(oversized) }
        #expect(subject.log.head == 3)
        #expect(subject.log.position(of: skipping[0].id) == nil)
        try subject.log.append(Self.batch(Self.records(4...4)))
        #expect(subject.log.head == 4)
    }

    @Test(arguments: Kind.allCases)
    func claimedPositionsNumberTheNewIDsAndAreForgottenWhenTheAppendIsRefused(kind: Kind) async throws {
        let subject = try await Subject(kind)
        let stored = Self.records(1...5)
        try subject.log.append(stored)
        let new = Self.records(6...8)
        let ids = [new[0].id, stored[2].id, new[1].id, new[0].id, new[2].id]

        #expect(subject.log.claimPositions(ids, from: 6) == [nil, 3, nil, 6, nil])
        // Refused (the last record is too large): nothing of it is remembered.
        var refused = Self.batch(Array(new[0..<2]))
        refused.append(position: 8, id: new[2].id, body: Data(count: (16 << 20) + 1))
        #expect(throws: EventLogError.self) { try subject.log.append(refused) }
        #expect(subject.log.positions(of: new.map(\.id)) == [nil, nil, nil])
        #expect(subject.log.claimPositions(ids, from: 6) == [nil, 3, nil, 6, nil])
        try subject.log.append(Self.batch(new))

        #expect(subject.log.positions(of: new.map(\.id)) == [6, 7, 8])
        #expect(subject.log.claimPositions(ids, from: 9) == [6, 3, 7, 6, 8])
        // Nothing appended after a claim (an empty append of either kind): nothing remembered.
        let unwritten = EventID.random()
        #expect(subject.log.claimPositions([unwritten], from: 9) == [nil])
        try subject.log.append([LogRecord]())
        #expect(subject.log.position(of: unwritten) == nil)
        #expect(subject.log.claimPositions([unwritten], from: 9) == [nil])
        try subject.log.append(RecordBatch())
        #expect(subject.log.position(of: unwritten) == nil)
        #expect(try subject.log.makeReader().read(after: 0, through: 8, limit: 10, maxBytes: 1 << 20) == stored + new)
    }

    @Test(arguments: Kind.allCases)
    func aCommitBegunCoversWhatCameBeforeItAndAppendsMayGoOnMeanwhile(kind: Kind) async throws {
        let subject = try await Subject(kind)
        let records = Self.records(1...8)
        try subject.log.append(Array(records[0..<5]))
        let finished = DispatchSemaphore(value: 0)
        let commit = try subject.log.beginCommit { finished.signal() }
        // Taken in while the commit is under way (where a log leaves one under way).
        try subject.log.append(Array(records[5...]))
        if let commit {
            #expect(commit.head == 5)
            try subject.log.finishCommit(commit)
            #expect(
                try await OwnThread.run(name: "test-wait") { finished.wait(timeout: .now() + 10) == .success },
                "the log said when its commit finished")
        }
        // The next commit covers the rest.
        if let next = try subject.log.beginCommit(whenFinished: {}) {
            #expect(next.head == 8)
            try subject.log.finishCommit(next)
        }
        #expect(subject.log.head == 8)
        #expect(try subject.log.makeReader().read(after: 0, through: 8, limit: 10, maxBytes: 1 << 20) == records)
    }
}
