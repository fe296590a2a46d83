/// Why an HTTP call has no answer, told by whether the request could have reached the server:
/// the cases whose ``requestWasSent`` is false are safe to send again.
public enum HTTPCallError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing listens at `address` (`host:port`): the connection was refused at every address
    /// tried, and the request was never sent. Told at once, not once the timeout has passed.
    case refused(address: String)
    /// No connection was made (the name did not resolve, no route, no answer to connecting within
    /// the timeout, a TLS handshake that failed): the request was never sent.
    case notConnected(String)
    /// No whole answer within the timeout, once the request may have been sent.
    case timedOut(milliseconds: Int64)
    /// The answer's body is over `limit` bytes (said by its Content-Length, or found reading it).
    case tooLarge(limit: Int)
    /// The connection failed after the request may have been sent (reset, closed, garbled).
    case interrupted(String)
    /// The URL is not one the client calls: malformed, or not http or https.
    case invalidURL(String)
    /// The calling task was cancelled; the request may have been sent.
    case cancelled
    /// The call could not begin (no thread, no handle): never sent.
    case cannotStart(String)

    /// Whether the server may have received the request (and done what it asked).
    public var requestWasSent: Bool {
        switch self {
        case .refused, .notConnected, .invalidURL, .cannotStart: false
        case .timedOut, .tooLarge, .interrupted, .cancelled: true
        }
    }

    public var description: String {
        switch self {
        case .refused(let address): "connection refused: nothing listens at \(address)"
        case .notConnected(let reason): "no connection: \(reason)"
        case .timedOut(let milliseconds): "timed out after \(milliseconds) ms"
        case .tooLarge(let limit): "the answer is over \(limit) bytes"
        case .interrupted(let reason): "the connection failed: \(reason)"
        case .invalidURL(let reason): "invalid URL: \(reason)"
        case .cancelled: "cancelled"
        case .cannotStart(let reason): "the call could not begin: \(reason)"
        }
    }
}
