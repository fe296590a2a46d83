import BureauSchemas
import Bus
import BusTesting
import EventLog
import FaultInjection
import Foundation
import Guards
import LogTools
import Logging
import Runtime
import Synchronization
import TestSupport
import ZeroMQBus

/// One run of the fault suite's workload against an in-process bus daemon whose log makes the
/// Nth file system call fail.
///
/// A producer publishes batches through a real client, as a producer would: unanswered
/// requests are retried with the same ids. A daemon that stops (as it must after a failed
/// sync or an unknown write) is started again on the same directory, as the supervisor would,
/// with a file system that does not fail. A refusal for a full disk frees the space, as an
/// operator would, and the refused batch is sent again. At the end the daemon is killed (its
/// disk frozen where it is, as `kill -9` leaves it) and started again, and everything is checked.
final class FaultRun: @unchecked Sendable {
    /// What the bus answered for one send of an event.
    enum Answer: Equatable, Sendable {
        case committed(UInt64)
        case duplicate(UInt64)
        case rejected(String)

        var position: UInt64? {
            switch self {
            case .committed(let position), .duplicate(let position): position
            case .rejected: nil
            }
        }
    }

    /// What the run saw, for the suite's summary.
    struct Summary: Sendable {
        var injected: String?
        var restarts = 0
        var refusedBatches = 0
        var acknowledged = 0
        var rejected = 0
    }

    let plan: FaultInjectingFileSystem.Plan?
    let directory: TemporaryDirectory
    let location: BusLocation
    private let state = Mutex(State())

    private struct State {
        var daemon: RunningBusDaemon?
        var fileSystem: FaultInjectingFileSystem?
        var fileSystems: [FaultInjectingFileSystem] = []
        var stopping = false
        var restarts = 0
        var startFailures: [String] = []
    }

    /// - Parameter segmentSize: small, so that the workload rolls segments several times.
    init(plan: FaultInjectingFileSystem.Plan?, segmentSize: Int64 = 2048) throws {
        self.plan = plan
        self.segmentSize = segmentSize
        directory = try TemporaryDirectory("fault")
        location = BusLocation(dataDirectory: directory.file("data"))
    }

    let segmentSize: Int64

    private func configuration(_ fileSystem: any FileSystem) -> BusDaemon.Configuration {
        var configuration = BusDaemon.Configuration(location: location)
        configuration.durability = .always
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.segmentSize = segmentSize
        configuration.fileSystem = fileSystem
        return configuration
    }

    /// Starts a daemon with `plan` (nil: a file system that does not fail); one that fails to
    /// start is replaced by one that does not fail.
    func start(plan: FaultInjectingFileSystem.Plan?) {
        let fileSystem = FaultInjectingFileSystem(plan: plan)
        state.withLock { $0.fileSystems.append(fileSystem) }
        do {
            let daemon = try BusDaemon(configuration: configuration(fileSystem), logger: TestLogging.logger("bus"))
                .start()
            state.withLock {
                $0.daemon = daemon
                $0.fileSystem = fileSystem
            }
            if state.withLock({ $0.stopping }) {
                daemon.stop()
                return
            }
            Task { [self] in
                try? await daemon.waitUntilStopped()
                let restart = state.withLock { state -> Bool in
                    guard !state.stopping, state.daemon === daemon else { return false }
                    state.restarts += 1
                    return true
                }
                guard restart else { return }
                // Stopping joins the daemon's threads and starting recovers the log and syncs
                // files: on threads of their own, not on the cooperative pool this task runs on
                // (an unstructured task does not keep a suite's `.ownThreads` preference).
                await daemon.stopOffThePool()
                do {
                    try await OwnThread.run(name: "fault-restart") { self.start(plan: nil) }
                } catch {
                    state.withLock { $0.startFailures.append("no thread to restart the daemon on: \(error)") }
                }
            }
        } catch {
            guard plan != nil else {
                state.withLock { $0.startFailures.append("\(error)") }
                return
            }
            start(plan: nil)
        }
    }

    /// Stops the daemon as `kill -9` would: nothing it does from now on reaches the disk.
    func kill() {
        let (daemon, fileSystem) = state.withLock { state in
            defer { state.daemon = nil }
            return (state.daemon, state.fileSystem)
        }
        fileSystem?.crash()
        daemon?.stop()
    }

    /// Stops the daemon for good: none is started again.
    func stop() {
        let daemon = state.withLock { state in
            state.stopping = true
            defer { state.daemon = nil }
            return state.daemon
        }
        daemon?.stop()
    }

    var injected: String? { state.withLock { $0.fileSystems.first?.injected } }

    /// What the run's daemons are doing, for a failure's message.
    var status: String {
        state.withLock { state in
            let daemon = state.daemon.map { "a daemon is running, head \($0.head)" } ?? "no daemon is running"
            return "\(daemon); \(state.fileSystems.count) started, \(state.restarts) restarted after stopping"
        }
    }
    /// How many calls the first daemon's file system counted towards `fault`.
    func count(of fault: FaultInjectingFileSystem.Fault) -> Int {
        state.withLock { $0.fileSystems.first?.count(of: fault) ?? 0 }
    }
    var restarts: Int { state.withLock { $0.restarts } }
    var retriedSyncs: Int { state.withLock { $0.fileSystems.reduce(0) { $0 + $1.retriedSyncs } } }
    var startFailures: [String] { state.withLock { $0.startFailures } }
    func freeSpace() { state.withLock { $0.fileSystem?.freeSpace() } }

    func client() throws -> ZeroMQBusClient {
        var options = ZeroMQBusClient.Options(process: "fault-producer")
        options.firstRetry = .milliseconds(10)
        options.maxRetry = .milliseconds(100)
        options.publishTimeout = .seconds(30)
        options.readTimeout = .milliseconds(500)
        return try ZeroMQBusClient(location: location, options: options, logger: TestLogging.logger("producer"))
    }
}

/// The workload: batches of events, some sent again (duplicates) and one invalid, so that every
/// answer the bus gives is exercised while segments roll.
struct FaultWorkload: Sendable {
    struct Event: Sendable {
        let id: EventID
        let envelope: Data
        /// Whether the bus must refuse it whatever happens (not a valid envelope).
        let invalid: Bool
    }

    let batches: [[Event]]

    static let type = "bureau.test.FaultHappened"

    /// `count` batches of `size` events of about `bytes` bytes; batches 4 and 9 repeat events
    /// of earlier ones, batch 6 carries an envelope the bus must reject.
    static func make(count: Int = 14, size: Int = 6, bytes: Int = 180, seed: UInt64) -> FaultWorkload {
        var generator = Xoshiro256(seed: seed)
        var batches: [[Event]] = []
        for number in 0..<count {
            var batch = (0..<size).map { index in
                let id = EventID(high: generator.next(), low: generator.next() | 1)
                let text = "batch \(number) event \(index)"
                return Event(id: id, envelope: envelope(id: id, text: text, bytes: bytes), invalid: false)
            }
            if number == 4 { batch.append(batches[1][2]) }
            if number == 9 { batch += [batches[8][0], batches[3][5]] }
            if number == 6 {
                var bad = Bureau_Envelope()
                let id = EventID(high: generator.next(), low: 7)
                bad.id = Data(id.bytes)
                bad.type = type
                bad.correlation = Data([1, 2, 3])
                batch.insert(Event(id: id, envelope: (try? bad.serializedData()) ?? Data(), invalid: true), at: 2)
            }
            batches.append(batch)
        }
        return FaultWorkload(batches: batches)
    }

    /// Publishes one batch and records every answer; returns whether the bus refused it for a
    /// full disk. Any other rejection of a valid envelope, or acceptance of an invalid one, is a failure.
    func send(
        _ batch: [Event], number: Int, with client: ZeroMQBusClient, answers: inout [EventID: [FaultRun.Answer]],
        failures: inout [String]
    ) async throws -> Bool {
        let ack = try await client.publish(envelopes: batch.map(\.envelope))
        guard ack.results.count == batch.count else {
            failures.append("batch \(number): \(ack.results.count) results for \(batch.count) events")
            return false
        }
        var refused = false
        for (event, result) in zip(batch, ack.results) {
            let answer: FaultRun.Answer =
                switch result.status {
                case .committed: .committed(result.position)
                case .duplicate: .duplicate(result.position)
                default: .rejected(result.reason)
                }
            answers[event.id, default: []].append(answer)
            if event.invalid {
                if answer.position != nil { failures.append("batch \(number): an invalid envelope got \(answer)") }
            } else if case .rejected(let reason) = answer {
                if reason.contains("disk is full") {
                    refused = true
                } else {
                    failures.append("batch \(number): \(event.id) was rejected: \(reason)")
                }
            }
        }
        return refused
    }

    static func envelope(id: EventID, text: String, bytes: Int) -> Data {
        var envelope = Bureau_Envelope()
        envelope.id = Data(id.bytes)
        envelope.type = type
        envelope.producer.process = "fault-producer"
        envelope.correlation = Data(id.bytes)
        envelope.payload = Data((text + String(repeating: ".", count: max(0, bytes - 60 - text.count))).utf8)
        return (try? envelope.serializedData()) ?? Data()
    }
}
