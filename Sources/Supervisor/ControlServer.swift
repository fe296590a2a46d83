import Bus
import EventLog
import Foundation
import Guards
import Logging
import Synchronization
import ZeroMQ

/// The supervisor's control socket, `DATA/run/supervisor.sock`: `bureau ps`, `down` and `logs`
/// talk to a running deployment through it.
///
/// A ZeroMQ REP socket; each request is one frame of text (`ps`, `down`, `logs`), each answer
/// one frame of JSON. The run directory is 0700 and the socket file 0600: only the owner may
/// stop the deployment.
final class ControlServer: Sendable {
    static func endpoint(_ location: BusLocation) -> String { "ipc://" + location.runDirectory + "/supervisor.sock" }

    private let stopping = Atomic<Bool>(false)

    init(location: BusLocation, supervisor: Supervisor, logger: Logger) throws {
        try OwnerOnly.makeDirectory(location.runDirectory)
        let context = try ZMQContext()
        let socket = try context.socket(.rep)
        try socket.setLinger(milliseconds: 0)
        try socket.bind(Self.endpoint(location))
        try OwnerOnly.restrict(location.runDirectory + "/supervisor.sock")
        // The socket moves to the control thread and is used there only; the context stays alive with it.
        let owned = UncheckedBox((socket: socket, context: context))
        Thread.detachNewThread { [self] in
            let socket = owned.value.socket
            var poller = ZMQPoller()
            let index = poller.add(socket)
            while !self.stopping.load(ordering: .relaxed) {
                // A poll or receive that fails (interrupted, the request gone) is tried again next
                // turn; the asking command has its own timeout.
                guard (try? poller.poll(timeout: 100)) ?? 0 > 0, poller.isReadable(index) else { continue }
                guard let request = try? socket.receiveMessage(wait: false), let first = request.first else { continue }
                let answer = Self.answer(String(decoding: first, as: UTF8.self), supervisor: supervisor, logger: logger)
                do {
                    try socket.send(Data(answer.utf8))
                } catch {
                    // The asking command times out; say why here.
                    logger.error(
                        "the control socket could not answer a request",
                        metadata: [
                            "supervisor.error": "\(error)",
                            "supervisor.request": "\(String(decoding: first, as: UTF8.self))",
                        ])
                }
            }
            socket.close()
            owned.value.context.shutdown()
        }
    }

    static func answer(_ request: String, supervisor: Supervisor, logger: Logger) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        switch request {
        case "ps":
            do {
                return String(decoding: try encoder.encode(supervisor.rows), as: UTF8.self)
            } catch {
                // Not "[]": that would say no process runs.
                logger.error(
                    "the process table could not be encoded for bureau ps", metadata: ["supervisor.error": "\(error)"])
                return #"{"error":"the process table could not be encoded"}"#
            }
        case "down":
            supervisor.requestStop()
            return #"{"stopping":true}"#
        default:
            return #"{"error":"unknown request; known: ps, down"}"#
        }
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
    }

}
