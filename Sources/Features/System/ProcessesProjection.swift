import BureauSchemas
import Bus
import Foundation
import Guards
import Runtime

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

    public func apply(_ event: StoredEvent, to value: inout Value) throws {
        if let started = try event.payload(as: ProcessStarted.self) {
            let row = Row(
                process: started.process, pid: started.pid, running: true, restarts: started.restarts, lastExit: nil)
            if let index = value.processes.firstIndex(where: { $0.process == started.process }) {
                value.processes[index].pid = row.pid
                value.processes[index].running = true
                value.processes[index].restarts = row.restarts
            } else {
                value.processes.append(row)
            }
        } else if let exited = try event.payload(as: ProcessExited.self),
            let index = value.processes.firstIndex(where: { $0.process == exited.process })
        {
            value.processes[index].running = false
            value.processes[index].lastExit = ExitStatus(exitCode: exited.exitCode, signal: exited.signal).description
        }
    }

    public func render(_ value: Value) -> String {
        guard !value.processes.isEmpty else { return "No processes recorded." }
        return value.processes.map { row in
            "\(Self.shown(row.process))  pid \(row.pid)  \(row.running ? "running" : "stopped")  restarts \(row.restarts)"
                + (row.lastExit.map { "  last exit: \(Self.shown($0))" } ?? "")
        }.joined(separator: "\n")
    }
}
