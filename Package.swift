// swift-tools-version:6.2
import PackageDescription

/// Every target of ours compiles in the Swift 6 language mode with warnings as errors.
let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error)
]

let package = Package(
    name: "Bureau",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "bureau", targets: ["bureau"]),
        .library(name: "Bus", targets: ["Bus"]),
        .library(name: "ZeroMQBus", targets: ["ZeroMQBus"]),
        .library(name: "InMemoryBus", targets: ["InMemoryBus"]),
        .library(name: "BusTesting", targets: ["BusTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Without its default ConfigurationSupport trait, which would build swift-configuration.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // Metrics: libraries record through swift-metrics; each process exports them with
        // swift-prometheus at /metrics (README, "Watching it run").
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Traces: the libraries trace through swift-distributed-tracing (an interface); the
        // composition root bootstraps OTLPTracing's tracer, which exports them over OTLP/HTTP.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        // libzmq from Debian's libzmq3-dev.
        .systemLibrary(
            name: "CZeroMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]
        ),
        // zlib: gzip for the embedded rates server, and the reference CRC-32 the log's checksums
        // are tested against.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Intel's ISA-L: zlib's CRC-32 (the same values) with carry-less multiplication, seven
        // times zlib's speed on a log record: the checksum of every record written and read.
        .systemLibrary(
            name: "CISAL",
            pkgConfig: "libisal",
            providers: [.apt(["libisal-dev"])]
        ),
        // libpq from Debian's libpq-dev: PostgreSQL's own client (TLS by the system's OpenSSL,
        // sslmode as PostgreSQL documents it), used by the store from threads of its own.
        .systemLibrary(
            name: "CLibpq",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // libcurl from Debian's libcurl4-openssl-dev: the HTTP client of the adapters and the trace
        // exporter (HTTPCalls), http and https, TLS by the system's OpenSSL.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(
            name: "ZeroMQ",
            dependencies: ["CZeroMQ", "Guards"],
            swiftSettings: strict
        ),
        // Guards at the edges: numbers people type, files they hand the tool, calendar dates; and
        // the one duration conversion, backoff and timeout every target may use.
        // No dependencies. (Files only their owner can read: OwnerOnly, in EventLog.)
        .target(
            name: "Guards",
            swiftSettings: strict
        ),
        .target(
            name: "BureauSchemas",
            dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")],
            swiftSettings: strict
        ),
        .target(
            name: "EventLog",
            dependencies: [
                "CISAL", "Guards",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "Bus",
            dependencies: [
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "EventLog", "BureauSchemas", "Guards", .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The bus over ZeroMQ: the daemon (`bureau bus`) and the client every process uses.
        .target(
            name: "ZeroMQBus",
            dependencies: [
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "Bus", "ZeroMQ", "EventLog", "BureauSchemas", "Guards",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The bus inside one process: the twin of ZeroMQBus for tests that need no daemon.
        .target(
            name: "InMemoryBus",
            dependencies: ["Bus", "EventLog", "InMemoryStores", "BureauSchemas", "Guards"],
            swiftSettings: strict
        ),
        // The in-memory twins of the event log and the snapshot store, for tests and the
        // in-memory bus: not linked into the bureau executable.
        .target(
            name: "InMemoryStores",
            dependencies: ["EventLog"],
            swiftSettings: strict
        ),
        .target(
            name: "Money",
            dependencies: ["BureauSchemas"],
            swiftSettings: strict
        ),
        .target(
            name: "Runtime",
            dependencies: [
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "Bus", "EventLog", "BureauSchemas", "Guards",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "WatchlistFeature",
            dependencies: ["Runtime", "Money", "BureauSchemas", "Bus"],
            path: "Sources/Features/Watchlist",
            swiftSettings: strict
        ),
        .target(
            name: "ConverterFeature",
            dependencies: ["Runtime", "Money", "BureauSchemas", "Bus"],
            path: "Sources/Features/Converter",
            swiftSettings: strict
        ),
        .target(
            name: "ReservationsFeature",
            dependencies: ["Runtime", "Money", "BureauSchemas", "Bus", "Guards"],
            path: "Sources/Features/Reservations",
            swiftSettings: strict
        ),
        .target(
            name: "AlertsFeature",
            dependencies: ["Runtime", "Money", "BureauSchemas", "Bus"],
            path: "Sources/Features/Alerts",
            swiftSettings: strict
        ),
        .target(
            name: "SystemFeature",
            dependencies: ["Runtime", "BureauSchemas", "Bus", "Guards"],
            path: "Sources/Features/System",
            swiftSettings: strict
        ),
        // What the adapters' HTTP calls share: a client that fails a connection at once, and
        // how a refused connection is told.
        .target(
            name: "HTTPCalls",
            dependencies: ["CCurl", "Guards"],
            path: "Sources/Adapters/HTTPCalls",
            swiftSettings: strict
        ),
        .target(
            name: "RatesAdapter",
            dependencies: [
                .product(name: "Metrics", package: "swift-metrics"),
                "Runtime", "Money", "Bus", "BureauSchemas", "EventLog", "Guards", "HTTPCalls",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Adapters/RatesAdapter",
            swiftSettings: strict
        ),
        .target(
            name: "BookingAdapter",
            dependencies: [
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "Runtime", "Bus", "BureauSchemas", "EventLog", "Guards", "HTTPCalls",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Adapters/BookingAdapter",
            swiftSettings: strict
        ),
        // Spans to an OpenTelemetry collector over OTLP/HTTP: a tracer for swift-distributed-tracing
        // (W3C traceparent, OpenTelemetry's samplers) and a batching exporter on HTTPCalls.
        .target(
            name: "OTLPTracing",
            dependencies: [
                "HTTPCalls", "Guards",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            exclude: ["Protos"],
            swiftSettings: strict
        ),
        .target(
            name: "RatesServer",
            dependencies: [
                "CZlib", "Guards",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Adapters/RatesServer",
            resources: [.copy("Resources/eurofxref-hist.csv.gz")],
            swiftSettings: strict
        ),
        .target(
            name: "BookingServer",
            dependencies: [
                "Guards",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Adapters/BookingServer",
            swiftSettings: strict
        ),
        // Reading, exchanging and repairing the log's files without the bus: what `bureau log`,
        // `replay` and `show` use, and the fault suite checks.
        .target(
            name: "LogTools",
            dependencies: [
                "EventLog", "Bus", "BureauSchemas", "Guards",
            ],
            swiftSettings: strict
        ),
        // The event log on PostgreSQL (libpq): the same EventLog, one writer under an
        // advisory lock; and reducer snapshots in the same database.
        .target(
            name: "PostgresStore",
            dependencies: [
                "EventLog", "BureauSchemas", "Guards",
                "CLibpq",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        // YAML files people write (bureau.yaml, scenario files): errors that name the line and the field.
        .target(
            name: "YAMLFile",
            dependencies: ["Guards", .product(name: "Yams", package: "Yams")],
            swiftSettings: strict
        ),
        // The supervisor behind `bureau up`: deployments, processes, restarts, the control socket.
        .target(
            name: "Supervisor",
            dependencies: [
                .product(name: "Metrics", package: "swift-metrics"),
                "ZeroMQBus",
                "Bus", "EventLog", "BureauSchemas", "ZeroMQ", "YAMLFile", "Guards",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict
        ),
        // A file system that fails the Nth call, for the fault suite: tests and the test-only
        // bureau-faults only, never the product.
        .target(
            name: "FaultInjection",
            dependencies: ["EventLog", "InMemoryStores", "Guards"],
            swiftSettings: strict
        ),
        // `bureau bus` with a fault planned in its log's file system (BUREAU_FAULT=crash@N): the
        // fault suite's real processes. Built with the tests; not a product.
        .executableTarget(
            name: "bureau-faults",
            dependencies: [
                "FaultInjection", "ZeroMQBus", "EventLog", "Bus", "Guards",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/bureau-faults",
            swiftSettings: strict
        ),
        // Real servers and hosts for tests and benchmarks: PostgreSQL (initdb, pg_ctl, a standby),
        // network namespaces, free ports. Never the product.
        .target(
            name: "TestServers",
            dependencies: ["Guards"],
            swiftSettings: strict
        ),
        // What `bureau test` runs scenario files with: given / when / expect, scenario files, JUnit
        // reports, and the deployments it runs them on (processes it starts, or one already running).
        .target(
            name: "BusScenarios",
            dependencies: [
                "ZeroMQBus",
                "Bus", "EventLog", "BureauSchemas", "Runtime", "Supervisor", "YAMLFile", "Guards",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict
        ),
        // The test kit for tests written at the bus: BusScenarios and the tiers inside a test's
        // process (the in-memory twin, a daemon on a temporary directory). A library product for
        // others' tests; never linked into the bureau executable (ARCHITECTURE.md, the rules).
        .target(
            name: "BusTesting",
            dependencies: [
                "BusScenarios", "InMemoryBus", "InMemoryStores", "ZeroMQBus", "Bus", "EventLog", "Runtime", "Guards",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // Terminal rendering: a cell buffer, display widths, a diff renderer, keys. No Bureau types.
        .target(
            name: "TerminalUI",
            swiftSettings: strict
        ),
        // The front-end: screens computed from projections, keys turned into command URLs.
        .target(
            name: "FrontEnd",
            dependencies: [
                "TerminalUI", "Bus", "EventLog", "Guards", "Runtime", "Money",
                "WatchlistFeature", "ConverterFeature", "ReservationsFeature", "AlertsFeature", "SystemFeature",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "BureauCLI",
            dependencies: [
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "OTLPTracing",
                "ZeroMQBus",
                "Bus", "EventLog", "BureauSchemas", "Runtime",
                "WatchlistFeature", "ConverterFeature", "ReservationsFeature", "AlertsFeature", "SystemFeature",
                "RatesAdapter", "BookingAdapter", "RatesServer", "BookingServer", "FrontEnd", "TerminalUI",
                "Supervisor", "BusScenarios", "Guards", "ZeroMQ", "YAMLFile", "LogTools", "PostgresStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "bureau-bench",
            dependencies: [
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                "TestServers",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "OTLPTracing",
                .product(name: "Hummingbird", package: "hummingbird"),
                "ZeroMQBus", "BusTesting",
                "Bus", "EventLog", "ZeroMQ", "Runtime", "WatchlistFeature", "BureauSchemas", "TerminalUI", "Guards",
                "PostgresStore", "LogTools",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/BureauBenchmarks",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "bureau",
            dependencies: ["BureauCLI", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),
        // What tests of features need, and no more: no bus transport, so that a feature's tests
        // do not link libzmq.
        .target(
            name: "FeatureTestSupport",
            dependencies: [
                "Bus", "EventLog", "Runtime", "BureauSchemas",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            path: "Tests/FeatureTestSupport",
            swiftSettings: strict
        ),
        .target(
            name: "TestSupport",
            dependencies: [
                // A real Prometheus's HTTP API, for the tests that start one.
                "HTTPCalls",
                "TestServers", "Guards", "ZeroMQ",
                "ZeroMQBus",
                "Bus", "EventLog", "Runtime", "BureauSchemas", "BusTesting", "BusScenarios",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),
        // OpenTelemetry's trace export messages (generated from its protos) and a collector that
        // receives them over HTTP: what the tests check exported traces with.
        .target(
            name: "OTLPTestSupport",
            dependencies: [
                "Guards", "OTLPTracing",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/OTLPTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "HTTPCallsTests",
            dependencies: ["HTTPCalls", "Guards"],
            swiftSettings: strict),
        .testTarget(
            name: "OTLPTracingTests",
            dependencies: [
                "OTLPTracing", "OTLPTestSupport", "TestServers", "Guards",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "WatchlistFeatureTests",
            dependencies: ["WatchlistFeature", "Runtime", "FeatureTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "ConverterFeatureTests",
            dependencies: ["ConverterFeature", "Runtime", "FeatureTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "ReservationsFeatureTests",
            dependencies: [
                "ReservationsFeature", "Runtime", "FeatureTestSupport",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "AlertsFeatureTests", dependencies: ["AlertsFeature", "Runtime", "FeatureTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "SystemFeatureTests",
            dependencies: [
                "SystemFeature", "Runtime",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BureauSchemasTests",
            dependencies: [
                "Guards", "BureauSchemas", "TestSupport", .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict),
        .testTarget(name: "MoneyTests", dependencies: ["Money"], swiftSettings: strict),
        .testTarget(name: "GuardsTests", dependencies: ["Guards"], swiftSettings: strict),
        .testTarget(
            name: "BureauCLITests",
            dependencies: [
                "BureauCLI", "Guards", "Bus", "EventLog", "Runtime", "ZeroMQBus", "TestSupport", "InMemoryBus",
                "ReservationsFeature", "BureauSchemas",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "RuntimeTests",
            dependencies: [
                "FaultInjection",
                "FeatureTestSupport",
                "InMemoryBus", "InMemoryStores", "ZeroMQBus", "Guards", "BusTesting",
                "Runtime", "Bus", "EventLog", "BureauSchemas", "WatchlistFeature", "TestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "TestServers",
                "FeatureTestSupport", "ZeroMQBus",
                "Bus", "EventLog", "BureauSchemas", "Runtime", "TestSupport", "BusTesting", "WatchlistFeature",
                "ConverterFeature",
                "ReservationsFeature", "AlertsFeature", "SystemFeature", "PostgresStore", "Guards", "LogTools",
                "OTLPTestSupport", "BookingAdapter", "BookingServer",
                // A booking service of a test's own, which keeps the headers it was sent.
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "RatesAdapterTests",
            dependencies: [
                "BusTesting", "FaultInjection", "InMemoryStores",
                "TestServers",
                "ZeroMQBus",
                "RatesAdapter", "RatesServer", "Runtime", "Bus", "EventLog", "BureauSchemas", "TestSupport", "Guards",
                "ConverterFeature", "Money", .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: strict),
        .testTarget(
            name: "BookingAdapterTests",
            dependencies: [
                "TestServers", "FaultInjection",
                "FeatureTestSupport", "ZeroMQBus",
                "BookingAdapter", "BookingServer", "Runtime", "Bus", "EventLog", "BureauSchemas", "TestSupport",
                "BusTesting", "ReservationsFeature", "Guards", "HTTPCalls", "InMemoryStores",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "SupervisorTests",
            dependencies: [
                "TestServers",
                "ZeroMQBus", "Supervisor", "Bus", "EventLog", "BureauSchemas", "TestSupport", "YAMLFile", "Guards",
                "BusTesting",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BusTestingTests",
            dependencies: [
                "TestServers", "Guards",
                "FeatureTestSupport",
                "BusTesting", "Bus", "EventLog", "BureauSchemas", "Runtime", "TestSupport", "WatchlistFeature",
                "InMemoryBus",
                "AlertsFeature", "ConverterFeature", "ReservationsFeature",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict),
        .testTarget(name: "TerminalUITests", dependencies: ["TerminalUI", "Guards"], swiftSettings: strict),
        .testTarget(
            name: "FrontEndTests",
            dependencies: [
                "TestServers",
                "FrontEnd", "TerminalUI", "Runtime", "Bus", "Money", "BureauSchemas", "TestSupport", "Guards",
                "EventLog",
                "WatchlistFeature", "ConverterFeature", "ReservationsFeature", "AlertsFeature", "SystemFeature",
            ],
            resources: [.copy("Snapshots")],
            swiftSettings: strict),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: [
                "Guards",
                "FaultInjection",
                "ZeroMQBus",
                "Bus", "EventLog", "LogTools", "Runtime", "BureauSchemas", "TestSupport", "ZeroMQ", "BusTesting",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "EventLogTests",
            dependencies: [
                "Guards",
                "TestServers", "FaultInjection", "EventLog", "InMemoryStores", "PostgresStore", "BureauSchemas",
                "TestSupport",
                "CZlib",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "LogToolsTests",
            dependencies: ["LogTools", "Bus", "EventLog", "BureauSchemas", "BusTesting", "TestSupport", "Guards"],
            swiftSettings: strict),
        // The bus's core, without libzmq: the sequencer, the subscription tracker, events.
        .testTarget(
            name: "BusTests",
            dependencies: [
                "InMemoryBus", "InMemoryStores", "Bus", "EventLog", "BureauSchemas", "Guards", "FeatureTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict),
        // The transport: the daemon and its client over real sockets, and the bus contract run
        // against them and the in-memory twin.
        .testTarget(
            name: "ZeroMQBusTests",
            dependencies: [
                "FaultInjection", "FeatureTestSupport",
                "InMemoryBus", "ZeroMQBus", "Bus", "EventLog", "BureauSchemas", "ZeroMQ", "TestSupport", "Guards",
                "BusTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strict),
    ]
)
