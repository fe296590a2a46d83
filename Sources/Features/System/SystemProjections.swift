import BureauSchemas
import Bus
import Foundation
import Runtime

public typealias ErrorRaised = Bureau_System_ErrorRaised
public typealias ProcessStarted = Bureau_System_ProcessStarted
public typealias ProcessExited = Bureau_System_ProcessExited

/// The errors any process raised, newest first; also the rates source's failures.
public struct ErrorsProjection: Projection {
    public struct Value: Sendable, Encodable, Equatable {
        public var errors: [Row] = []
        public init() {}
    }

    public struct Row: Sendable, Encodable, Equatable {
        public var position: UInt64
        public var time: String
        public var module: String
        public var code: String
        public var message: String
    }

    /// How many errors are kept.
    public let limit: Int

    public init(limit: Int = 200) {
        self.limit = limit
    }

    public var name: String { "errors" }
    public var inputTypes: [String] { [ErrorRaised.protoMessageName, Bureau_Rates_RatesFetchFailed.protoMessageName] }
    public var initialValue: Value { Value() }

    public func apply(_ event: StoredEvent, to value: inout Value) {
        var row: Row?
        if let raised = try? event.payload(as: ErrorRaised.self) {
            row = Row(
                position: event.position, time: "\(event.commitTime)", module: raised.module, code: raised.code,
                message: raised.message)
        } else if let failed = try? event.payload(as: Bureau_Rates_RatesFetchFailed.self) {
            row = Row(
                position: event.position, time: "\(event.commitTime)", module: "rates", code: "fetch-failed",
                message: "\(failed.reason) (attempt \(failed.attempt), next in \(failed.nextRetryMs) ms)")
        }
        guard let row else { return }
        value.errors.insert(row, at: 0)
        if value.errors.count > limit { value.errors.removeLast() }
    }

    public func render(_ value: Value) -> String {
        guard !value.errors.isEmpty else { return "No errors." }
        return value.errors.map { "\($0.position) \($0.time) \($0.module) \($0.code): \($0.message)" }
            .joined(separator: "\n")
    }
}

/// The processes the supervisor started and how each last ended.
public struct ProcessesProjection: Projection {
    public struct Value: Sendable, Encodable, Equatable {
        public var processes: [Row] = []
        public init() {}
    }

    public struct Row: Sendable, Encodable, Equatable {
        public var process: String
        public var pid: Int32
        public var running: Bool
        public var restarts: UInt32
        public var lastExit: String?
    }

    public init() {}

    public var name: String { "processes" }
    public var inputTypes: [String] { [ProcessStarted.protoMessageName, ProcessExited.protoMessageName] }
    public var initialValue: Value { Value() }

    public func apply(_ event: StoredEvent, to value: inout Value) {
        if let started = try? event.payload(as: ProcessStarted.self) {
            let row = Row(
                process: started.process, pid: started.pid, running: true, restarts: started.restarts, lastExit: nil)
            if let index = value.processes.firstIndex(where: { $0.process == started.process }) {
                value.processes[index].pid = row.pid
                value.processes[index].running = true
                value.processes[index].restarts = row.restarts
            } else {
                value.processes.append(row)
            }
        } else if let exited = try? event.payload(as: ProcessExited.self),
            let index = value.processes.firstIndex(where: { $0.process == exited.process })
        {
            value.processes[index].running = false
            value.processes[index].lastExit =
                exited.signal != 0 ? "signal \(exited.signal)" : "exit code \(exited.exitCode)"
        }
    }

    public func render(_ value: Value) -> String {
        guard !value.processes.isEmpty else { return "No processes recorded." }
        return value.processes.map { row in
            "\(row.process)  pid \(row.pid)  \(row.running ? "running" : "stopped")  restarts \(row.restarts)"
                + (row.lastExit.map { "  last exit: \($0)" } ?? "")
        }.joined(separator: "\n")
    }
}

/// The system feature: no reducer; what every process reports about itself.
public enum SystemModule {
    public static func make() -> FeatureModule {
        FeatureModule(
            name: "system", summary: "process life cycles and errors",
            projections: [AnyProjection(ErrorsProjection()), AnyProjection(ProcessesProjection())])
    }
}
