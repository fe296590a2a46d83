import Bus
import Synchronization

/// What stops a reducer host.
public enum RuntimeError: Error, CustomStringConvertible {
    case outputRejected(String)
    case moduleLocked(String)

    public var description: String {
        switch self {
        case .outputRejected(let reason): "the bus rejected a reducer's output: \(reason)"
        case .moduleLocked(let reason): reason
        }
    }
}
