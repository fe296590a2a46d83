import EventLog
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A fault plan that could not be parsed.
public struct FaultPlanError: Error, CustomStringConvertible {
    public let text: String
    public var description: String {
        "'\(text)' is not a fault plan: use FAULT@N with FAULT one of "
            + FaultInjectingFileSystem.Fault.allCases.map(\.rawValue).joined(separator: ", ")
            + " and N ≥ 1 (the Nth call that counts for it)"
    }
}
