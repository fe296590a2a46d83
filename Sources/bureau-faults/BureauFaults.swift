import Bus
import EventLog
import FaultInjection
import Foundation
import Guards
import Logging
import ServiceLifecycle
import ZeroMQBus

/// `bureau-faults --data DIR [--segment-mib N] [--heartbeat-ms N]`: the bus daemon of `bureau bus`
/// with a fault planned in its log's file system by `BUREAU_FAULT=FAULT@N` (`enospc`, `eio`,
/// `short-write`, `fdatasync`, or `crash`: SIGKILL at that call), for the fault suite's real
/// processes (`ProcessCrashTests`). Built with the tests; `bureau` itself reads no fault plan.
@main
struct BureauFaults {
    static let variable = "BUREAU_FAULT"

    static func main() async {
        do {
            try await run(Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("bureau-faults: \(error)\n".utf8))
            exit(1)
        }
    }

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ arguments: [String]) async throws {
        var options: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let name = arguments[index]
            guard ["--data", "--segment-mib", "--heartbeat-ms"].contains(name), index + 1 < arguments.count else {
                throw UsageError(
                    description: "'\(name)': takes --data DIR, --segment-mib N and --heartbeat-ms N, each with a value")
            }
            options[name] = arguments[index + 1]
            index += 2
        }
        guard let data = options["--data"] else { throw UsageError(description: "--data DIR is required") }
        var configuration = BusDaemon.Configuration(location: BusLocation(dataDirectory: data))
        configuration.maxMemoryBytes = BusDaemon.defaultMaxMemoryMiB << 20
        if let text = options["--segment-mib"] {
            do {
                configuration.segmentSize = try BoundedNumber.integer(text, in: Int64(1)...4096) << 20
            } catch {
                throw UsageError(description: "--segment-mib: \(error)")
            }
        }
        if let text = options["--heartbeat-ms"] {
            do {
                configuration.heartbeatInterval = try BoundedNumber.milliseconds(text, in: 1...60_000)
            } catch {
                throw UsageError(description: "--heartbeat-ms: \(error)")
            }
        }
        if let plan = ProcessInfo.processInfo.environment[variable], !plan.isEmpty {
            let parsed: FaultInjectingFileSystem.Plan
            do {
                parsed = try FaultInjectingFileSystem.Plan(parsing: plan, killsProcess: true)
            } catch {
                throw UsageError(description: "\(variable): \(error)")
            }
            FileHandle.standardError.write(
                Data("\(variable)=\(plan): injecting \(parsed.fault) at call \(parsed.call) of the log\n".utf8))
            configuration.fileSystem = FaultInjectingFileSystem(plan: parsed)
        }
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "bureau-faults")
        let daemon = BusDaemon(configuration: configuration, logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: daemon)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
