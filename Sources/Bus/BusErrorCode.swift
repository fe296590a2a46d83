/// The code a bus answers a request it refuses whole with: the `code` of the wire's
/// `ErrorReply`, the same from the daemon and the in-memory twin. The wire strings live here and
/// nowhere else.
///
/// A struct rather than an enum, as HTTP's status codes are: a newer daemon may answer a code
/// this build does not know, and the client must still carry it to whoever reads the error.
public struct BusErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// The request's frames are not what the protocol says (missing, of the wrong size, not
    /// decodable, or a `follows` frame a daemon from before it does not take).
    public static let malformedRequest = BusErrorCode(rawValue: "malformed-request")
    /// The request holds more events or bytes than a bus takes in one request.
    public static let tooLarge = BusErrorCode(rawValue: "too-large")
    /// The request's verb is not one the bus knows (a client newer than the daemon).
    public static let unknownVerb = BusErrorCode(rawValue: "unknown-verb")
    /// The request names a protocol version the bus does not speak (`bureau/1`, say).
    public static let unsupportedProtocol = BusErrorCode(rawValue: "unsupported-protocol")
    /// A publish request whose `follows` request has not reached the daemon: nothing of it was
    /// stored, and the client sends it again once what it follows is answered.
    public static let outOfOrder = BusErrorCode(rawValue: "out-of-order")
    /// A read after the published head (`ErrorReply.head` and `.epoch` say where the log ends
    /// and which daemon said so).
    public static let aheadOfLog = BusErrorCode(rawValue: "ahead-of-log")
    /// The daemon could not read its log to answer a read.
    public static let readFailed = BusErrorCode(rawValue: "read-failed")

    /// Every code a bus of this build answers with.
    public static let known: Set<BusErrorCode> = [
        .malformedRequest, .tooLarge, .unknownVerb, .unsupportedProtocol, .outOfOrder, .aheadOfLog, .readFailed,
    ]
}
