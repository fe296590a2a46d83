import BureauSchemas

/// What the bus did with one published event.
public enum PublishOutcome: Sendable, Equatable {
    /// Appended at this position.
    case committed(UInt64)
    /// An event with the same id was already committed at this position; nothing was appended.
    case duplicate(UInt64)
    /// Not appended, for this reason.
    case rejected(String)

    /// The position the event has in the log, if it has one.
    public var position: UInt64? {
        switch self {
        case .committed(let position), .duplicate(let position): position
        case .rejected: nil
        }
    }
}

extension PublishOutcome {
    /// The outcome a bus's `PublishResult` says. A status this build does not know (a newer
    /// bus's) is not taken for a refusal: the event may be in the log, so the caller is told
    /// the answer cannot be used (`BusError.unexpectedAnswer`), as for any answer it cannot read.
    public init(_ result: Bureau_Bus_PublishResult) throws(BusError) {
        switch result.status {
        case .committed: self = .committed(result.position)
        case .duplicate: self = .duplicate(result.position)
        case .rejected: self = .rejected(result.reason)
        case .UNRECOGNIZED(let status):
            throw .unexpectedAnswer("a publish result of status \(status), which this client does not know")
        }
    }
}
