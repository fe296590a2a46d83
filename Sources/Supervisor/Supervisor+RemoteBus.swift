import Bus
import Foundation
import Guards
import Synchronization
import ZeroMQBus

extension Supervisor {
    /// What `bureau ps` shows of a bus on another machine: waiting for it, answering, or not.
    struct RemoteBusStatus: Sendable {
        var state: State = .starting
        var since: ContinuousClock.Instant?
    }

    /// Reads the deployment's remote bus address and key files, so that a wrong one stops
    /// `bureau up` before anything starts.
    static func resolve(_ remote: Deployment.RemoteBus) throws(SupervisorError) -> ZeroMQBus.RemoteBus {
        do {
            return try ZeroMQBus.RemoteBus(
                url: remote.url, serverKeyFile: remote.serverKeyFile, clientKeyFile: remote.clientKeyFile,
                serverKeyOption: "bus.server_key", clientKeyOption: "bus.client_key")
        } catch {
            throw SupervisorError("bus: \(error)")
        }
    }

    /// Waits for the bus on another machine to answer, up to the deployment's `bus.wait_s`, and
    /// then keeps `bureau ps`'s view of it current; nil once it answers, else why not. A bus
    /// that refuses this host's key is not waited for: that will not change by itself.
    func waitForRemoteBus(_ remote: ZeroMQBus.RemoteBus, timeout: Duration) async -> SupervisorError? {
        let client: ZeroMQBusClient
        do {
            client = try ZeroMQBusClient(remote: remote, options: .init(process: "supervisor"), logger: logger)
        } catch {
            return SupervisorError("cannot reach the bus at \(remote.url): \(error)")
        }
        say("waiting for the bus at \(remote.url)", process: nil)
        let deadline = ContinuousClock.now + timeout
        var lastError: any Error = BusError.noAnswer(endpoint: remote.url, seconds: timeout.inSeconds)
        var attempts = 0
        while ContinuousClock.now < deadline, !stopping.load(ordering: .relaxed) {
            attempts += 1
            if attempts > 1 {
                // A ping that fails at once (a connection reset, a socket error) is not tried
                // again in a spin: a pause that grows to a second. No time left for a ping after
                // it: the last error stands.
                let pause = Self.remoteBusRetry.nominalDelay(attempt: attempts - 1)
                guard deadline - .now > pause + .milliseconds(100) else { break }
                guard (try? await Task.sleep(for: pause)) != nil else { break }
            }
            do {
                let status = try await client.ping(timeout: min(.seconds(2), deadline - .now))
                say("the bus at \(remote.url) answers (head \(status.head))", process: nil)
                remoteStatus.withLock { $0 = RemoteBusStatus(state: .ready, since: .now) }
                watchRemoteBus(client, url: remote.url)
                return nil
            } catch let error as BusError {
                if case .connectionRefused = error {
                    client.close()
                    remoteStatus.withLock { $0.state = .failed }
                    return SupervisorError("\(error)")
                }
                lastError = error
            } catch {
                lastError = error
            }
        }
        client.close()
        remoteStatus.withLock { $0.state = .unreachable }
        if stopping.load(ordering: .relaxed) {
            return SupervisorError("stopped while waiting for the bus at \(remote.url)")
        }
        return SupervisorError(
            "the bus at \(remote.url) did not answer within \(timeout.secondsText()) s (bus.wait_s): \(lastError)")
    }

    /// How long the wait for a bus on another machine pauses between failed pings.
    static let remoteBusRetry = Backoff(initial: .milliseconds(100), maximum: .seconds(1), jitter: 0)

    /// Pings the bus every two seconds for `bureau ps` until the supervisor stops; says when it
    /// stops answering (and why) and when it answers again, in the supervisor's output.
    private func watchRemoteBus(_ client: ZeroMQBusClient, url: String) {
        let task = Task {
            defer { client.close() }
            while !Task.isCancelled {
                guard (try? await Task.sleep(for: .seconds(2))) != nil else { return }
                let failure: (any Error)?
                do {
                    _ = try await client.ping(timeout: .seconds(2))
                    failure = nil
                } catch {
                    failure = error
                }
                let changed = remoteStatus.withLock { status -> Bool in
                    let state: State = failure == nil ? .ready : .unreachable
                    guard status.state != state else { return false }
                    status = RemoteBusStatus(state: state, since: .now)
                    return true
                }
                guard changed else { continue }
                if let failure {
                    say("the bus at \(url) does not answer: \(failure)", process: nil)
                } else {
                    say("the bus at \(url) answers again", process: nil)
                }
            }
        }
        remoteWatch.withLock { $0 = task }
    }

    /// The row `bureau ps` shows for the bus on another machine.
    func remoteBusRow(_ remote: ZeroMQBus.RemoteBus, now: ContinuousClock.Instant) -> Row {
        let status = remoteStatus.withLock { $0 }
        return Row(
            name: remote.url, pid: 0, state: status.state, restarts: 0,
            uptimeSeconds: status.state == .ready ? status.since.map { (now - $0).inSeconds } : nil, log: "")
    }
}
