import Bus
import EventLog
import Foundation
import Guards
import Logging
import Synchronization
import ZeroMQ

/// The supervisor's control socket, `DATA/run/supervisor.sock`: `bureau ps`, `down`, `kill` and
/// `logs` talk to a running deployment through it.
///
/// A ZeroMQ REP socket; each request is one frame of text (`ps`, `down`, `kill NAME SIGNAL`),
/// each answer one frame of JSON. The run directory is 0700 and the socket file 0600: only the owner may
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
            var failures = FailureStreak()
            while !self.stopping.load(ordering: .relaxed) {
                let request: [Data]?
                do {
                    guard try poller.poll(timeout: 100) > 0, poller.isReadable(index) else {
                        Self.noteWorking(&failures, logger: logger)
                        continue
                    }
                    request = try socket.receiveMessage(wait: false)
                } catch let error as ZMQError where error.interrupted {
                    continue  // a signal (a child's SIGCHLD, say): tried again at once
                } catch {
                    // Tried again after the poll's own wait, never in a spin; while it fails, `bureau
                    // ps`, `down` and `logs` time out, so it is said at once, and once.
                    if failures.failed() {
                        logger.error(
                            "the control socket fails: bureau ps, down and logs cannot reach this deployment",
                            metadata: ["supervisor.error": "\(error)", "supervisor.retry": "every 100 ms"])
                    }
                    Thread.sleep(forTimeInterval: 0.1)
                    continue
                }
                Self.noteWorking(&failures, logger: logger)
                guard let request, let first = request.first else { continue }
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

    /// Ends a streak of failures of the control socket, saying so if there was one.
    private static func noteWorking(_ failures: inout FailureStreak, logger: Logger) {
        let failed = failures.succeeded()
        if failed > 0 {
            logger.info("the control socket works again", metadata: ["supervisor.failures": "\(failed)"])
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
        case let request where request.hasPrefix("kill "):
            let answer = kill(request.split(separator: " ").dropFirst(), supervisor: supervisor)
            do {
                return String(decoding: try encoder.encode(answer), as: UTF8.self)
            } catch {
                return #"{"error":"the answer could not be encoded"}"#
            }
        default:
            return #"{"error":"unknown request; known: ps, down, kill NAME SIGNAL"}"#
        }
    }

    /// The answer to `kill NAME SIGNAL`: the id of the child signalled, or why none was.
    struct KillAnswer: Codable, Sendable, Equatable {
        var pid: Int32?
        var error: String?
    }

    static func kill(_ arguments: ArraySlice<Substring>, supervisor: Supervisor) -> KillAnswer {
        guard arguments.count == 2, let name = arguments.first,
            let signal = arguments.last.flatMap({ ExitStatus.signal(named: String($0)) })
        else {
            return KillAnswer(error: "kill takes a process's name and a signal's number: kill NAME SIGNAL")
        }
        switch supervisor.signal(String(name), signal) {
        case .sent(let pid):
            return KillAnswer(pid: pid)
        case .refused(let pid, let code):
            return KillAnswer(error: "\(name) (pid \(pid)) could not be signalled: \(String(cString: strerror(code)))")
        case .notRunning(let state):
            return KillAnswer(error: "\(name) has no process running: it is \(state.rawValue)")
        case .unknownProcess(let known):
            return KillAnswer(
                error: "this deployment has no process \(name); its processes: \(known.joined(separator: ", "))")
        }
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
    }

}
