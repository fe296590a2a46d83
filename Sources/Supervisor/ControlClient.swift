import Bus
import Foundation
import Guards
import ZeroMQ

/// The client side of the control socket, for `bureau ps`, `down`, `kill` and `logs`.
public enum ControlClient {
    /// Whether a supervisor's control socket is in `location`'s run directory: one runs there,
    /// or one that stopped without removing it.
    public static func socketExists(location: BusLocation) -> Bool {
        !FilePresence.isMissing(location.runDirectory + "/supervisor.sock")
    }

    /// Sends `request` and returns the answer, or throws when no supervisor answers in time.
    public static func ask(
        _ request: String, location: BusLocation, timeout: Duration = .seconds(3)
    ) throws(SupervisorError)
        -> Data
    {
        let path = location.runDirectory + "/supervisor.sock"
        guard socketExists(location: location) else {
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

    /// Sends `signal` to the process `name` of a running deployment, by its supervisor (so that
    /// it reaches no other process); returns the id of the child it was sent to.
    public static func kill(
        _ name: String, signal: Int32, location: BusLocation, timeout: Duration = .seconds(3)
    ) throws(SupervisorError) -> Int32 {
        let data = try ask("kill \(name) \(signal)", location: location, timeout: timeout)
        let answer: ControlServer.KillAnswer
        do {
            answer = try JSONDecoder().decode(ControlServer.KillAnswer.self, from: data)
        } catch {
            throw SupervisorError("the supervisor answered something unreadable: \(error)")
        }
        if let error = answer.error { throw SupervisorError(error) }
        guard let pid = answer.pid else {
            throw SupervisorError("the supervisor answered neither a process id nor an error")
        }
        return pid
    }

    /// The processes of a running deployment.
    public static func processes(
        location: BusLocation, timeout: Duration = .seconds(3)
    ) throws(SupervisorError) -> [Supervisor.Row] {
        let data = try ask("ps", location: location, timeout: timeout)
        do {
            return try JSONDecoder().decode([Supervisor.Row].self, from: data)
        } catch {
            throw SupervisorError("the supervisor answered something unreadable: \(error)")
        }
    }
}
