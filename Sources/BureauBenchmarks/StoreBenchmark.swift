import ArgumentParser
import Bus
import BusTesting
import EventLog
import Foundation
import Guards
import Logging
import PostgresStore
import TestServers
import ZeroMQBus

struct StoreBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "The bus on a PostgreSQL store, beside a raw batched insert of the same rows and the bus on files.",
        discussion: HelpText.prose(
            """
            Three rows in one run, all durable (`always`, synchronous_commit on): producer → bus on
            files → subscriber; the same with the log in PostgreSQL (--store); and a raw baseline
            that inserts rows of the same size and columns into the same server, --batch rows per
            INSERT … SELECT FROM unnest(…) on one connection, one transaction each. Without --server
            it starts PostgreSQL from Debian's packages in a directory of its own (as the postgres
            user when run as root) and stops it at the end.
            """)
    )

    @OptionGroup var options: PublishLoadOptions
    @Option(
        help: ArgumentHelp(
            "An existing server to measure instead: postgres://USER:PASSWORD@HOST:PORT/DATABASE (two more databases are created on it).",
            valueName: "url"))
    var server: String?

    func run() async throws {
        startWatchdog(.seconds(1200))
        let load = options.load
        let started = server == nil ? try PostgresServer.start() : nil
        defer { started?.stop() }
        let base = server ?? started.map { $0.url(database: "postgres") } ?? ""
        let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        print(
            "# store benchmark: \(formatted(Double(options.events))) events, \(options.payloadBytes)-byte payloads, durability always"
        )

        let files = try await withScratchDirectory { directory in
            let (daemon, producer, consumer) = try BusBenchmark.startBus(directory, durability: .always)
            defer { daemon.stop() }
            defer {
                producer.close()
                consumer.close()
            }
            return try await load.throughput(producer: producer, consumer: consumer).eventsPerSecond
        }

        let busURL = try database(named: "bench_bus", on: base, logger: quiet)
        let store = BusDaemon.Store(name: "\(busURL)") { logger, _ in
            try PostgresEventLog(url: busURL, logger: logger)
        }
        let (postgres, bodyBytes) = try await withScratchDirectory { directory in
            let (daemon, producer, consumer) = try BusBenchmark.startBus(directory, durability: .always, store: store)
            defer { daemon.stop() }
            defer {
                producer.close()
                consumer.close()
            }
            let rate = try await load.throughput(producer: producer, consumer: consumer).eventsPerSecond
            let sample = try PostgresLogReader(url: busURL, logger: quiet).read(
                after: 0, through: 1, limit: 1, maxBytes: 1 << 20)
            return (rate, sample.first?.body.count ?? 0)
        }

        let rawURL = try database(named: "bench_raw", on: base, logger: quiet)
        try PostgresEventLog(url: rawURL, logger: quiet).close()
        let raw = try rawInsert(rawURL, bodyBytes: bodyBytes, logger: quiet)

        print("")
        print("| measure | value |")
        print("|---|---|")
        print("| bus on files: producer → subscriber | \(formatted(files)) events/s |")
        print("| bus on PostgreSQL: producer → subscriber | \(formatted(postgres)) events/s |")
        print(
            "| raw PostgreSQL: INSERT … unnest of \(options.batch) rows of \(bodyBytes)-byte bodies, one transaction each | \(formatted(raw)) rows/s |"
        )
        print("| bus on PostgreSQL / raw insert | \(String(format: "%.2f", postgres / raw)) |")
        print("| bus on PostgreSQL / bus on files | \(String(format: "%.2f", postgres / files)) |")
    }

    /// A new database on the server `base` names, as a store URL.
    func database(named prefix: String, on base: String, logger: Logger) throws -> PostgresStoreURL {
        var url = try PostgresStoreURL(parsing: base, environment: ProcessInfo.processInfo.environment)
        let name = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
        let session = try PostgresSession.connect(url, writable: false, logger: logger)
        defer { session.close() }
        try session.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), what: "creating the database \(name)")
        url.database = name
        return url
    }

    /// Rows per second inserted as the store inserts them, without the bus: the same statement
    /// on a connection of the store's kind.
    func rawInsert(_ url: PostgresStoreURL, bodyBytes: Int, logger: Logger) throws -> Double {
        let body = Data(repeating: 0x61, count: bodyBytes)
        let total = options.events
        let batch = options.batch
        let session = try PostgresSession.connect(url, logger: logger)
        defer { session.close() }
        let started = ContinuousClock.now
        var next = 0
        while next < total {
            let count = min(batch, total - next)
            let positions = (0..<count).map { Int64(next + 1 + $0) }
            let ids = (0..<count).map { _ in UUID() }
            let types = [String](repeating: "bureau.bench.Happened", count: count)
            let times = [Date](repeating: Date(), count: count)
            let causations = [Int64](repeating: 0, count: count)
            let bodies = [Data](repeating: body, count: count)
            try session.query(
                """
                INSERT INTO bureau_events (position, id, type, committed_at, causation, correlation, body)
                SELECT p, i, t, c, NULLIF(k, 0), i, b
                FROM unnest(\(positions), \(ids), \(types), \(times), \(causations), \(bodies)) AS u(p, i, t, c, k, b)
                """, what: "inserting \(count) rows")
            next += count
        }
        return Double(total) / (ContinuousClock.now - started).inSeconds
    }
}
