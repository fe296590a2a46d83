import Guards

/// What went wrong talking to the bus.
public enum BusError: Error, CustomStringConvertible, Equatable {
    /// No daemon answered a request in time.
    case noAnswer(endpoint: String, seconds: Double)
    /// The daemon (or the in-memory twin) refused the request as a whole, with a code of the
    /// wire's `ErrorReply`.
    case refused(code: BusErrorCode, message: String)
    /// The bus answered something this client cannot use (a reply of the wrong shape, too few
    /// results, positions out of order): a fault of the bus or of this client, not a refusal.
    case unexpectedAnswer(String)
    /// Bytes that should be an envelope are not one.
    case malformedEnvelope(String)
    /// The client was closed while the request was waiting.
    case closed
    /// The data directory or its sockets cannot be used.
    case unusableLocation(String)
    /// A socket call failed.
    case socket(String)
    /// The client cannot get in to the bus at `endpoint`, and why (a refused key, a bus that does
    /// or does not speak CURVE, a host that cannot be reached).
    case connectionFailed(endpoint: String, reason: String)
    /// The bus refused this client for good (a key it does not allow, a bus that does or does
    /// not speak CURVE): trying again will not help.
    case connectionRefused(endpoint: String, reason: String)
    /// A read of the log through the bus heard nothing for `seconds` after `position`.
    case readStalled(after: UInt64, seconds: Double)
    /// A subscriber has every event through `position`, but the bus's log ends at `head`: it is
    /// not the log the subscriber read (restored from an older copy, replaced, another bus's).
    /// `epoch` is the daemon's (0 if it did not say). The subscription ends: going on would
    /// drop every event up to `position` as already delivered.
    case aheadOfLog(position: UInt64, head: UInt64, epoch: UInt64)
    /// A publish request larger than a bus takes was not sent: libzmq would drop the connection
    /// on its frame, unanswered. Found by the client, before sending.
    case requestTooLarge(bytes: Int, limit: Int)

    public var description: String {
        switch self {
        case .noAnswer(let endpoint, let seconds):
            "no bus answered at \(endpoint) within \(Duration.seconds(seconds).secondsText()) s; "
                + "is `bureau bus` running for this data directory?"
        case .refused(let code, let message): "the bus refused the request (\(code)): \(message)"
        case .unexpectedAnswer(let what): "the bus answered what this client cannot use: \(what)"
        case .malformedEnvelope(let reason): "malformed envelope: \(reason)"
        case .closed: "the bus client was closed"
        case .unusableLocation(let reason): reason
        case .socket(let reason): reason
        case .connectionFailed(let endpoint, let reason), .connectionRefused(let endpoint, let reason):
            "cannot use the bus at \(endpoint): \(reason)"
        case .readStalled(let position, let seconds):
            "the bus sent nothing for \(Duration.seconds(seconds).secondsText()) s while the log was read after position "
                + "\(position); the read is incomplete"
        case .aheadOfLog(let position, let head, let epoch):
            "this subscriber has read through position \(position), but the bus's log ends at position \(head)"
                + (epoch == 0 ? "" : " (daemon epoch \(epoch))")
                + ": it is not the log this subscriber read (restored from an older copy, replaced, or another "
                + "bus's). Start it again from a position at or below \(head) (from 0 to rebuild its state), "
                + "or point it at the bus it came from"
        case .requestTooLarge(let bytes, let limit):
            "a publish request of \(bytes) bytes was not sent: a bus takes at most \(limit) bytes of envelopes in "
                + "one request; send fewer or smaller envelopes per request"
        }
    }

}
