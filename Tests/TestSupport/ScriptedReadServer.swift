import BureauSchemas
import Bus
import Foundation
import Guards
import ZeroMQ
import ZeroMQBus

/// The read side of a bus that a test plays by hand: a ROUTER at the read endpoint and a PUB at
/// the events endpoint of a data directory, so that a client's catch-up reads come to the test,
/// which answers each as it likes (a reply no daemon would send, an error with any text).
public final class ScriptedReadServer: @unchecked Sendable {
    /// A request as it came: `[identity][version][verb][request id][body]`.
    public struct Request: Sendable {
        public let identity: Data
        public let verb: String
        public let requestID: Data
        public let body: Data
    }

    public let location: BusLocation
    private let context: ZMQContext
    private let router: ZMQSocket
    private let publisher: ZMQSocket

    public init(location: BusLocation) throws {
        self.location = location
        try FileManager.default.createDirectory(
            atPath: location.runDirectory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        context = try ZMQContext()
        router = try context.socket(.router)
        try router.setLinger(milliseconds: 0)
        try router.setReceiveTimeout(milliseconds: 10_000)
        try router.bind(location.ipcEndpoints.read)
        publisher = try context.socket(.pub)
        try publisher.setLinger(milliseconds: 0)
        try publisher.bind(location.ipcEndpoints.events)
    }

    /// The next request with `verb` (others, such as progress reports, are passed over); throws
    /// if none comes within 10 s.
    public func nextRequest(verb: String) async throws -> Request {
        for _ in 0..<100 {
            guard let frames = try await router.nextMessage() else { break }
            guard frames.count >= 4 else { continue }
            let request = Request(
                identity: frames[0], verb: String(decoding: frames[2], as: UTF8.self), requestID: frames[3],
                body: frames.count > 4 ? frames[4] : Data())
            if request.verb == verb { return request }
        }
        throw TestSupportError("no '\(verb)' request came to \(location.ipcEndpoints.read) within 10 s")
    }

    /// Answers `request` with `verb` and `frames`, as the daemon frames its replies.
    public func answer(_ request: Request, verb: String, frames: [Data]) throws {
        try router.send(
            multipart: [request.identity, Data(WireProtocol.version.utf8), Data(verb.utf8), request.requestID]
                + frames)
    }

    /// Answers a read with events: `envelopes` in one batch, the log's head and how far it was read.
    public func answer(_ request: Request, envelopes: [Data], head: UInt64, scannedTo: UInt64) throws {
        var header = Bureau_Bus_ReadReply()
        header.head = head
        header.scannedTo = scannedTo
        header.batched = true
        try answer(
            request, verb: WireProtocol.events, frames: [try header.serializedData(), WireProtocol.batch(envelopes)])
    }

    /// Answers `request` with an error, as the daemon refuses one.
    public func refuse(_ request: Request, code: String, message: String) throws {
        var error = Bureau_Bus_ErrorReply()
        error.code = code
        error.message = message
        try answer(request, verb: WireProtocol.error, frames: [try error.serializedData()])
    }

    public func close() {
        router.close()
        publisher.close()
    }
}
