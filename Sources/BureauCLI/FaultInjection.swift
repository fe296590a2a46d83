import EventLog
import Foundation

/// `BUREAU_FAULT=FAULT@N` makes the Nth file system call of the bus daemon's log fail, for the
/// fault suite (RELIABILITY.md): `enospc`, `eio`, `short-write`, `fdatasync` or `crash` (the
/// process is killed with SIGKILL at that call). Unset, the real file system is used.
enum FaultInjection {
    static let environmentVariable = "BUREAU_FAULT"

    static func fileSystem(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws
        -> any FileSystem
    {
        guard let text = environment[environmentVariable], !text.isEmpty else { return PosixFileSystem() }
        do {
            let plan = try FaultInjectingFileSystem.Plan(parsing: text, killsProcess: true)
            printWarning("\(environmentVariable)=\(text): injecting \(plan.fault) at call \(plan.call) of the log")
            return FaultInjectingFileSystem(plan: plan)
        } catch {
            throw CLIError("\(environmentVariable): \(error)")
        }
    }
}
