import EventLog
import FaultInjection
import Foundation
import InMemoryStores
import PostgresStore
import TestSupport
import Testing

/// What every ``SnapshotStore`` must do, run against the file store, its in-memory twin and the
/// PostgreSQL store (where a server can be started; elsewhere its cases are skipped, saying why).
// Writes, syncs and reads files without end: on threads of its own, off the cooperative pool.
@Suite(.ownThreads)
struct SnapshotStoreContractTests {
    struct Counter: Codable, Equatable, Sendable {
        var count: Int
        var names: [String]
    }

    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case file, memory, postgres
        var testDescription: String { rawValue }
    }

    final class Subject: @unchecked Sendable {
        let store: any SnapshotStore
        let directory: TemporaryDirectory?
        init(_ kind: Kind) async throws {
            switch kind {
            case .file:
                let directory = try TemporaryDirectory("snap")
                self.directory = directory
                store = FileSnapshotStore(directory: directory.file("snapshots"))
            case .memory:
                directory = nil
                store = InMemorySnapshotStore()
            case .postgres:
                // Where there is no server, the case is a skip that says why.
                try await TestPostgres.skipIfUnavailable()
                directory = nil
                let url = try TestPostgres.database()
                self.url = url
                store = try PostgresSnapshotStore(
                    url: PostgresStoreURL(parsing: url), logger: TestLogging.logger("bureau.snapshots"))
            }
        }

        /// The database of a PostgreSQL subject.
        private(set) var url: String?

        func corrupt(_ module: String) throws {
            if let store = store as? FileSnapshotStore {
                try Files.write(store.path(of: module), "{ not json")
            } else if let store = store as? InMemorySnapshotStore {
                store.keep(Data("{ not json".utf8), as: module)
            } else if let url, let database = url.split(separator: "/").last {
                try TestPostgres.server().sql(
                    "UPDATE bureau_snapshots SET state = '\\x7b206e6f74206a736f6e'::bytea WHERE module = '\(module)'",
                    database: String(database))
            }
        }
    }

    @Test(arguments: Kind.allCases)
    func aSavedSnapshotLoadsBack(kind: Kind) async throws {
        let subject = try await Subject(kind)
        #expect(subject.store.load(Counter.self, module: "m", stateVersion: 1, rejected: { _ in }) == nil)
        try subject.store.save(
            Snapshot(module: "m", stateVersion: 1, position: 42, state: Counter(count: 3, names: ["a"])))
        try subject.store.save(
            Snapshot(module: "m", stateVersion: 1, position: 99, state: Counter(count: 4, names: ["b"])))
        let loaded = subject.store.load(Counter.self, module: "m", stateVersion: 1, rejected: { _ in })
        #expect(loaded?.position == 99)
        #expect(loaded?.state == Counter(count: 4, names: ["b"]))
    }

    @Test(arguments: Kind.allCases)
    func aSnapshotOfAnotherStateVersionIsIgnoredWithAReason(kind: Kind) async throws {
        let subject = try await Subject(kind)
        try subject.store.save(Snapshot(module: "m", stateVersion: 1, position: 5, state: Counter(count: 1, names: [])))
        var reasons: [String] = []
        #expect(subject.store.load(Counter.self, module: "m", stateVersion: 2, rejected: { reasons.append($0) }) == nil)
        #expect(reasons.count == 1 && reasons[0].contains("state version is 1; this build uses 2"))
    }

    @Test(arguments: Kind.allCases)
    func anUnreadableSnapshotIsIgnoredWithAReason(kind: Kind) async throws {
        let subject = try await Subject(kind)
        try subject.store.save(Snapshot(module: "m", stateVersion: 1, position: 5, state: Counter(count: 1, names: [])))
        try subject.corrupt("m")
        var reasons: [String] = []
        #expect(subject.store.load(Counter.self, module: "m", stateVersion: 1, rejected: { reasons.append($0) }) == nil)
        #expect(reasons.first?.contains("not readable JSON") == true)
    }

    @Test(arguments: Kind.allCases)
    func aStateThatNoLongerDecodesIsIgnored(kind: Kind) async throws {
        struct Other: Codable, Sendable { var text: String }
        let subject = try await Subject(kind)
        try subject.store.save(Snapshot(module: "m", stateVersion: 1, position: 5, state: Other(text: "x")))
        var reasons: [String] = []
        #expect(subject.store.load(Counter.self, module: "m", stateVersion: 1, rejected: { reasons.append($0) }) == nil)
        #expect(reasons.first?.contains("does not decode") == true)
    }

    @Test func thePostgresStoreConnectsAgainWhenItsConnectionEnds() async throws {
        let subject = try await Subject(.postgres)
        let database = try #require(subject.url?.split(separator: "/").last.map(String.init))
        let counter = Counter(count: 1, names: [])
        try subject.store.save(Snapshot(module: "m", stateVersion: 1, position: 1, state: counter))
        // What a server restart or a failover does to the store's connection.
        #expect(try TestPostgres.server().endConnections(to: database) == 1)
        try subject.store.save(Snapshot(module: "m", stateVersion: 1, position: 2, state: Counter(count: 2, names: [])))
        #expect(subject.store.load(Counter.self, module: "m", stateVersion: 1, rejected: { _ in })?.position == 2)
        try TestPostgres.server().endConnections(to: database)
        #expect(subject.store.load(Counter.self, module: "m", stateVersion: 1, rejected: { _ in })?.position == 2)
    }

    @Test func theFileStoreLeavesNoTemporaryFileBehind() throws {
        let directory = try TemporaryDirectory("snap")
        let store = FileSnapshotStore(directory: directory.path)
        try store.save(Snapshot(module: "m", stateVersion: 1, position: 1, state: Counter(count: 1, names: [])))
        #expect(Files.list(directory.path) == ["m.snapshot"])
    }

    @Test func aSaveThatFailsAtAnyCallLeavesThePreviousSnapshotReadable() throws {
        let directory = try TemporaryDirectory("snap")
        let first = Snapshot(module: "m", stateVersion: 1, position: 10, state: Counter(count: 1, names: ["a"]))
        let second = Snapshot(module: "m", stateVersion: 1, position: 20, state: Counter(count: 2, names: ["b"]))
        let counter = FaultInjectingFileSystem(plan: nil)
        try FileSnapshotStore(directory: directory.file("count"), fileSystem: counter).save(first)
        let calls = counter.count(of: .io)
        for fault in [FaultInjectingFileSystem.Fault.io, .noSpace, .crash] {
            for call in 1...calls {
                let path = directory.file("\(fault)-\(call)")
                try FileSnapshotStore(directory: path).save(first)
                let store = FileSnapshotStore(
                    directory: path, fileSystem: FaultInjectingFileSystem(plan: .init(fault, at: call)))
                let saved = (try? store.save(second)) != nil
                let loaded = FileSnapshotStore(directory: path).load(
                    Counter.self, module: "m", stateVersion: 1, rejected: { Issue.record("\(fault)@\(call): \($0)") })
                // The old snapshot or the new one, whole; the new one if the save said it succeeded.
                #expect(loaded?.position == (saved ? 20 : loaded?.position), "\(fault)@\(call)")
                #expect(loaded?.position == 10 || loaded?.position == 20, "\(fault)@\(call)")
                #expect(loaded?.state == (loaded?.position == 20 ? second.state : first.state))
            }
        }
    }

    @Test func anyFlippedBitInASnapshotFileIsNoticedAndTheSnapshotIgnored() throws {
        let directory = try TemporaryDirectory("snap")
        let store = FileSnapshotStore(directory: directory.path)
        let snapshot = Snapshot(
            module: "m", stateVersion: 1, position: 42, state: Counter(count: 7, names: ["x", "y"]))
        try store.save(snapshot)
        let path = store.path(of: "m")
        let pristine = try #require(Files.read(path))
        var ignored = 0
        for offset in 0..<Int64(pristine.utf8.count) {
            try Files.write(path, pristine)
            let bit = UInt8(1 << (offset % 8))
            let byte = Array(pristine.utf8)[Int(offset)]
            try Files.overwrite(path, at: offset, with: [byte ^ bit])
            var reasons: [String] = []
            let loaded = store.load(Counter.self, module: "m", stateVersion: 1, rejected: { reasons.append($0) })
            if let loaded {
                // Only a change that means the same (the case of a hex digit) may go unnoticed.
                #expect(loaded.position == 42 && loaded.state == snapshot.state, "bit \(offset * 8 + offset % 8)")
            } else {
                ignored += 1
                #expect(reasons.count == 1 && reasons[0].contains(path), "\(reasons)")
            }
        }
        #expect(ignored >= pristine.utf8.count - 8)
    }
}
