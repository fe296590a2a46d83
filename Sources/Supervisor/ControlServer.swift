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
        let owned = UncheckedSocket(socket: socket, context: context)
        Thread.detachNewThread { [self] in
            let socket = owned.socket
            var poller = ZMQPoller()
            let index = poller.add(socket)
            while !self.stopping.load(ordering: .relaxed) {
                guard (try? poller.poll(timeout: 100)) ?? 0 > 0, poller.isReadable(index) else { continue }
                guard let request = try? socket.receiveMessage(wait: false), let first = request.first else { continue }
                let answer = Self.answer(String(decoding: first, as: UTF8.self), supervisor: supervisor)
                _ = try? socket.send(Data(answer.utf8))
            }
            socket.close()
            owned.context.shutdown()
        }
    }

    static func answer(_ request: String, supervisor: Supervisor) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        switch request {
        case "ps":
            return (try? encoder.encode(supervisor.rows)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
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

/// The socket moves to the control thread and is used there only.
private struct UncheckedSocket: @unchecked Sendable {
    let socket: ZMQSocket
    let context: ZMQContext
}

/// The client side of the control socket, for `bureau ps`, `down` and `logs`.
public enum ControlClient {
    /// Sends `request` and returns the answer, or throws when no supervisor answers in time.
    public static func ask(
        _ request: String, location: BusLocation, timeout: Duration = .seconds(3)
    ) throws(SupervisorError)
        -> Data
    {
        let path = location.runDirectory + "/supervisor.sock"
        guard FileManager.default.fileExists(atPath: path) else {
            throw SupervisorError(
                "no deployment is running on \(location.dataDirectory) (no \(path)); start one with `bureau up`")
        }
        do {
            let context = try ZMQContext()
            defer { context.shutdown() }
            let socket = try context.socket(.req)
            defer { socket.close() }
            try socket.setLinger(milliseconds: 0)
            try socket.connect(ControlServer.endpoint(location))
            _ = try socket.send(Data(request.utf8))
            var poller = ZMQPoller()
            let index = poller.add(socket)
            let milliseconds = Int(clamping: timeout.inMilliseconds)
            guard try poller.poll(timeout: milliseconds) > 0, poller.isReadable(index),
                let answer = try socket.receiveMessage(wait: false)?.first
            else {
                throw SupervisorError(
                    "the supervisor of \(location.dataDirectory) did not answer within \(milliseconds) ms; is `bureau up` running?"
                )
            }
            return answer
        } catch let error as SupervisorError {
            throw error
        } catch {
            throw SupervisorError("control socket: \(error)")
        }
    }

    /// The processes of a running deployment.
    public static func processes(location: BusLocation) throws(SupervisorError) -> [Supervisor.Row] {
        let data = try ask("ps", location: location)
        do {
            return try JSONDecoder().decode([Supervisor.Row].self, from: data)
        } catch {
            throw SupervisorError("the supervisor answered something unreadable: \(error)")
        }
    }
}
