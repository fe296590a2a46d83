/// The `code` of an `ErrorRaised` event: stable and machine-readable, what `bureau show errors`,
/// `bureau ps`, the front-end's status line and tests match on. Every code a process of this
/// build raises is named here, so that its wire string is written once and a reader finds them
/// all in one place.
///
/// A struct rather than an enum, as ``BusErrorCode`` is: a log keeps the codes of older and
/// newer builds, and a reader must carry a code it does not know.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    // The rates adapter.
    /// The rates source could not be read (timed out, refused, unreachable, an answer too large).
    public static let fetchFailed = ErrorCode(rawValue: "fetch-failed")
    /// The rates source answered with an HTTP status other than 200.
    public static let httpStatus = ErrorCode(rawValue: "http-status")
    /// The rates source answered 200 with a document that is not a fixing.
    public static let malformedDocument = ErrorCode(rawValue: "malformed-document")
    /// The bus refused the fixing the adapter read.
    public static let publishRefused = ErrorCode(rawValue: "publish-refused")

    // The booking adapter.
    /// The bus refused a booking's outcome (it is tried again).
    public static let outcomeRefused = ErrorCode(rawValue: "outcome-refused")
    /// The booking service refused the request as invalid: the reservation is rejected.
    public static let bookingRequestInvalid = ErrorCode(rawValue: "booking-request-invalid")
    /// The booking service could not be reached or failed: the call is retried.
    public static let bookingUnavailable = ErrorCode(rawValue: "booking-unavailable")

    // Reducer hosts.
    /// An input event whose payload does not decode as its type says.
    public static let malformedInput = ErrorCode(rawValue: "malformed-input")

    // The supervisor.
    /// A process failed too often in a row and is no longer restarted.
    public static let crashLooping = ErrorCode(rawValue: "crash-looping")
    /// The control socket behind `bureau ps`, `logs` and `down` could not be opened.
    public static let controlUnavailable = ErrorCode(rawValue: "control-unavailable")

    // The bus daemon.
    /// The disk is full: publishes are refused until there is space.
    public static let diskFull = ErrorCode(rawValue: "disk-full")
    /// The log was recovered at start (a torn tail cut back).
    public static let logRecovered = ErrorCode(rawValue: "log-recovered")
}
