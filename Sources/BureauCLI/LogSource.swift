import Bus
import EventLog
import Foundation
import LogTools
import PostgresStore
import ZeroMQBus

/// Where a tool that reads the log finds it: the data directory's segment files; given
/// `--bus tcp://…`, a bus on another machine through its catch-up reads; given `--store
/// postgres://…`, the PostgreSQL store. All give the same events with the same stored bytes,
/// and all fail rather than stop early.
///
/// ``scanEvents(from:to:_:)`` and ``forEach(from:to:_:)`` give events as this build reads them
/// (through its upcasters) unless the source is ``raw``; ``scan(from:to:_:)``, which gives the
/// stored bytes too, gives events as stored.
struct LogSource {
    enum Kind {
        case files(BusLocation)
        case bus(ZeroMQBusClient)
        case store(PostgresLogReader, PostgresStoreURL)
    }

    let kind: Kind
    /// How events are read: through the build's upcasters, or `.none` for events as stored.
    let upcasting: EventUpcasting

    /// The store `store` names, else the bus `connection` names, else the data directory's files.
    ///
    /// - Parameter raw: events as stored, not through the build's upcasters.
    static func resolve(
        _ global: GlobalOptions, _ connection: BusConnectionOptions, _ store: StoreOptions, process: String,
        raw: Bool = false
    ) throws
        -> LogSource
    {
        let upcasting = raw ? .none : try Composition.upcasting()
        if let url = try store.url() {
            guard try connection.remote() == nil else {
                throw CLIError("give --store or --bus, not both: both say where the log is")
            }
            let reader = try PostgresLogReader(
                url: url, reconnectWait: StoreOptions.readerReconnectWait, logger: global.logger("bureau.store"))
            return LogSource(kind: .store(reader, url), upcasting: upcasting)
        }
        guard try connection.remote() != nil else {
            return LogSource(kind: .files(global.location), upcasting: upcasting)
        }
        // Its reads are of stored bytes; this source upcasts what it gives.
        let client = try connection.client(process: process, global: global, upcasting: .none)
        return LogSource(kind: .bus(client), upcasting: upcasting)
    }

    /// Calls `body` with each event from `from` through `to` (the end of the log when nil) and
    /// the envelope bytes the log holds for it; `body` returns false to stop.
    func scan(from: UInt64 = 1, to: UInt64? = nil, _ body: (StoredEvent, Data) throws -> Bool) async throws {
        switch kind {
        case .files(let location):
            try LogFiles.scan(in: location, from: from, to: to) { event, record in try body(event, record.body) }
        case .bus(let client):
            try await client.readLog(from: from, to: to, body)
        case .store(let reader, _):
            try reader.scan(from: from, through: try to ?? reader.head()) { event, record in
                try body(event, record.body)
            }
        }
    }

    /// The same without the envelope bytes, for tools that need only the events: the files are
    /// then read without making a record of each.
    func scanEvents(from: UInt64 = 1, to: UInt64? = nil, _ body: (StoredEvent) throws -> Bool) async throws {
        let upcasting = self.upcasting
        switch kind {
        case .files(let location) where upcasting.isEmpty:
            try LogFiles.scanEvents(directory: location.logDirectory, from: from, to: to, warn: printWarning, body)
        case .files(let location):
            try LogFiles.scanEvents(directory: location.logDirectory, from: from, to: to, warn: printWarning) {
                try upcasting.reading($0, body)
            }
        case .bus, .store:
            try await scan(from: from, to: to) { event, _ in try upcasting.reading(event, body) }
        }
    }

    /// The same, for a body that always continues.
    func forEach(from: UInt64 = 1, to: UInt64? = nil, _ body: (StoredEvent) throws -> Void) async throws {
        try await scanEvents(from: from, to: to) { event in
            try body(event)
            return true
        }
    }

    /// What the tool read from, for messages: the log directory or the bus's address.
    var name: String {
        switch kind {
        case .files(let location): location.logDirectory
        case .bus(let client): client.endpoints.ingress
        case .store(_, let url): "\(url)"
        }
    }

    var isFiles: Bool {
        if case .files = kind { return true }
        return false
    }

    func close() {
        if case .bus(let client) = kind { client.close() }
    }
}
