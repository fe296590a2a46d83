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
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // libzmq from Debian's libzmq3-dev.
        .systemLibrary(
            name: "CZeroMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]
        ),
        // zlib's CRC-32 for log record checksums.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "ZeroMQ",
            dependencies: ["CZeroMQ"],
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
                "CZlib",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "Bus",
            dependencies: [
                "ZeroMQ", "EventLog", "BureauSchemas",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "BureauCLI",
            dependencies: [
                "Bus", "EventLog", "BureauSchemas",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "bureau-bench",
            dependencies: [
                "Bus", "EventLog", "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/BureauBenchmarks",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "bureau",
            dependencies: ["BureauCLI", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),
        .target(
            name: "TestSupport",
            dependencies: ["Bus", "EventLog", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "EventLogTests", dependencies: ["EventLog", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "BusTests", dependencies: ["Bus", "EventLog", "BureauSchemas", "ZeroMQ", "TestSupport"],
            swiftSettings: strict),
    ]
)
