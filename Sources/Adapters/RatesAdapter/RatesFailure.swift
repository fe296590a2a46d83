import Bus

/// Why a poll of the rates source came to nothing: the one list both the failure metric's
/// `reason` label and the `ErrorRaised` code are read from.
enum RatesFailure: String, CaseIterable, Sendable {
    case httpStatus = "http-status"
    case timeout
    case refused
    case unreachable
    case tooLarge = "too-large"
    case malformedDocument = "malformed-document"
    case publishRefused = "publish-refused"

    /// A fetch error's failure; nil for a fetch abandoned (the adapter is stopping).
    init?(_ error: FetchError) {
        switch error {
        case .status: self = .httpStatus
        case .timedOut: self = .timeout
        case .refused: self = .refused
        case .unreachable: self = .unreachable
        case .tooLarge: self = .tooLarge
        case .cancelled: return nil
        }
    }

    /// The metric's `reason` label.
    var label: String { rawValue }

    /// The code of the `ErrorRaised` that reports it: the source could not be read, whatever
    /// the transport's reason, unless it answered (a status, a document) or the bus refused.
    var code: ErrorCode {
        switch self {
        case .httpStatus: .httpStatus
        case .timeout, .refused, .unreachable, .tooLarge: .fetchFailed
        case .malformedDocument: .malformedDocument
        case .publishRefused: .publishRefused
        }
    }
}
