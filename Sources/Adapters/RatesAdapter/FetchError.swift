/// Why a fetch failed, for `RatesFetchFailed.reason`.
public enum FetchError: Error, Equatable, CustomStringConvertible {
    /// The server answered with a status other than 200.
    case status(Int)
    case timedOut(milliseconds: Int)
    /// Nothing listens at the address (`host:port`): the connection was refused, which is
    /// known at once, not at the timeout.
    case refused(String)
    /// The connection failed otherwise (reset, DNS, no route…).
    case unreachable(String)
    /// The body was larger than the limit.
    case tooLarge(limit: Int)
    /// The fetch was cancelled: its poll's timeout passed, or the adapter is stopping.
    case cancelled

    public var description: String {
        switch self {
        case .status(let code): "HTTP \(code)"
        case .timedOut(let milliseconds): "timed out after \(milliseconds) ms"
        case .refused(let address): "connection refused: nothing listens at \(address)"
        case .unreachable(let reason): "unreachable: \(reason)"
        case .tooLarge(let limit): "the body is over the limit of \(limit) bytes"
        case .cancelled: "cancelled"
        }
    }

    public var httpStatus: Int {
        if case .status(let code) = self { return code }
        return 0
    }
}
