import Bus
import EventLog
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// `bureau bus` run as a child process on a data directory, for tests that kill it.
public final class BusProcess: @unchecked Sendable {
    public let location: BusLocation
    public let directory: String
    public private(set) var process: ChildProcess?
    private var starts = 0
    /// What its children's output files are named after (NAME1.err, NAME2.err…): two processes
    /// on one data directory need two names, or their outputs go to the same files.
    private let name: String

    /// The daemon's command: `bureau bus`, or the fault suite's `bureau-faults`.
    private let daemonCommand: (executable: String, arguments: [String])

    /// - Parameters:
    ///   - faults: run the test-only `bureau-faults` (which reads `BUREAU_FAULT`) instead of
    ///     `bureau bus`.
    ///   - name: what its output files are named after.
    public init(directory: String, data: String? = nil, faults: Bool = false, name: String = "bus") {
        self.directory = directory
        self.name = name
        location = BusLocation(dataDirectory: data ?? directory + "/data")
        daemonCommand = faults ? (BureauExecutable.faults, []) : (BureauExecutable.path, ["bus"])
    }

    /// Starts the daemon and returns once it answers a ping.
    @discardableResult
    public func start(
        _ extra: [String] = [], environment: [String: String] = [:], waitUntilReady: Bool = true
    ) async throws -> ChildProcess {
        starts += 1
        let child = try ChildProcess(
            daemonCommand.executable,
            daemonCommand.arguments + ["--data", location.dataDirectory, "--heartbeat-ms", "100"] + extra,
            directory: directory, name: "\(name)\(starts)", environment: environment)
        process = child
        if waitUntilReady { try await Self.waitUntilReady(location, child: child) }
        return child
    }

    /// Pings until the daemon answers, up to `timeout`.
    public static func waitUntilReady(
        _ location: BusLocation, child: ChildProcess? = nil, timeout: Duration = .seconds(30)
    )
        async throws
    {
        let client = try ZeroMQBusClient(
            location: location, options: .init(process: "ready-check"), logger: TestLogging.logger("ready"))
        defer { client.close() }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let child, !child.isRunning {
                throw TestSupportError("the bus exited before it was ready: \(child.standardError)")
            }
            if (try? await client.ping(timeout: .milliseconds(300))) != nil { return }
        }
        throw TestSupportError(
            "the bus did not answer within \(timeout)" + (child.map { "; it said:\n\($0.standardError)" } ?? ""))
    }

    /// A client of this bus named `process` (its logger too), whose publishes wait up to
    /// `publishTimeout` (the client's default when nil): long enough for a bus under load, or one
    /// killed and started again.
    public func client(_ process: String, publishTimeout: Duration? = nil) throws -> ZeroMQBusClient {
        var options = ZeroMQBusClient.Options(process: process)
        if let publishTimeout { options.publishTimeout = publishTimeout }
        return try ZeroMQBusClient(location: location, options: options, logger: TestLogging.logger(process))
    }

    /// Sends `signal` and waits for the process to end; returns its exit code.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM) async -> Int32? {
        guard let process else { return nil }
        process.signal(signal)
        let code = await process.exitCode()
        self.process = nil
        return code
    }

    /// Every record in the log, read from the files.
    public func records() throws -> [LogRecord] {
        let cursor = try LogCursor(directory: location.logDirectory, after: 0)
        var records: [LogRecord] = []
        while let record = try cursor.next() { records.append(record) }
        return records
    }

    /// Runs `bureau` with arguments to completion; returns its exit code and output.
    public func run(
        _ arguments: [String], name: String = "cli", data: Bool = true
    ) async throws -> (
        code: Int32, out: String, err: String
    ) {
        let child = try ChildProcess(
            BureauExecutable.path, arguments + (data ? ["--data", location.dataDirectory] : []), directory: directory,
            name: name)
        let code = await child.exitCode()
        let result = (code, child.standardOutput, child.standardError)
        unlink(child.stdoutPath)
        unlink(child.stderrPath)
        return result
    }

    deinit {
        process?.signal(SIGKILL)
    }
}
