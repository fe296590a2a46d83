import BureauSchemas
import Bus
import EventLog
import Logging
import SwiftProtobuf
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// A request as the daemon's ROUTER sockets receive it: `[identity][version][verb][request id][arguments…]`.
struct RequestFrames {
    let identity: Data
    let verb: String
    let requestID: Data
    /// The argument frames, if they were kept (see ``IngressLoop``); empty if over the limits.
    let arguments: [Data]
    /// How many argument frames there were, and their bytes, kept or not.
    let frameCount: Int
    let argumentBytes: Int

    struct Problem: Error {
        let identity: Data
        let code: BusErrorCode
        let message: String
        let requestID: Data
    }

    /// What a publish request without envelopes is told.
    static let noEnvelopes =
        "a publish request carries one batch frame of 1 to \(BusLimits.maxEnvelopesPerPublish) envelopes, not 0"

    /// Parses a whole message's frames, as the catch-up server receives them.
    static func parse(_ frames: [Data]) -> Result<RequestFrames, Problem> {
        let arguments = Array(frames.dropFirst(4))
        return parse(
            Array(frames.prefix(4)), arguments: arguments, frameCount: arguments.count,
            argumentBytes: arguments.reduce(0) { $0 + $1.count })
    }

    /// Parses the identity and the three header frames; the arguments come as received.
    static func parse(
        _ header: [Data], arguments: [Data], frameCount: Int, argumentBytes: Int
    )
        -> Result<RequestFrames, Problem>
    {
        let identity = header.first ?? Data()
        let requestID = header.count > 3 && header[3].count == WireProtocol.requestIDBytes ? header[3] : Data()
        guard header.count >= 4 else {
            return .failure(
                Problem(
                    identity: identity, code: .malformedRequest,
                    message:
                        "a request has at least 3 frames (version, verb, request id); got \(max(0, header.count - 1))",
                    requestID: requestID))
        }
        guard header[1] == Data(WireProtocol.version.utf8) else {
            let version = String(decoding: header[1].prefix(40), as: UTF8.self)
            let shown = header[1].count > 40 ? version + "…" : version
            return .failure(
                Problem(
                    identity: identity, code: .unsupportedProtocol,
                    message: "unsupported protocol '\(shown)'; this bus speaks \(WireProtocol.version)",
                    requestID: requestID))
        }
        guard header[3].count == WireProtocol.requestIDBytes else {
            return .failure(
                Problem(
                    identity: identity, code: .malformedRequest,
                    message: "the request id must be \(WireProtocol.requestIDBytes) bytes, not \(header[3].count)",
                    requestID: Data()))
        }
        let verb = String(decoding: header[2].prefix(64), as: UTF8.self)
        if verb == WireProtocol.publish && frameCount == 0 {
            return .failure(
                Problem(
                    identity: identity, code: .malformedRequest,
                    message: noEnvelopes,
                    requestID: requestID))
        }
        return .success(
            RequestFrames(
                identity: identity, verb: verb, requestID: requestID, arguments: arguments, frameCount: frameCount,
                argumentBytes: argumentBytes))
    }
}
