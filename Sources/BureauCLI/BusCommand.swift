import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import Logging
import PostgresStore
import ServiceLifecycle
import ZeroMQ
import ZeroMQBus

struct BusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bus",
        abstract: "Run the bus daemon: sequence, store and publish every event.",
        discussion: HelpText.prose(
            """
            The daemon is the only writer of the log in <data>/log and serves the bus on ipc
            sockets in <data>/run (owner-only). It stops cleanly on SIGTERM or SIGINT, with
            everything it acknowledged made durable.

            Durability policies:
              always        fdatasync before acknowledging; events that arrive
                            together share one fdatasync (group commit).
                            Acknowledged events survive a power cut.
              interval=MS   acknowledge once written; fdatasync at most every
                            MS milliseconds.
              never         leave writing back to the operating system.

            With --store postgres://…, the log is kept in PostgreSQL instead of <data>/log
            (the data directory still holds the sockets): each batch is one transaction,
            committed before it is acknowledged (`always`; `interval` and `never` turn the
            writer's synchronous_commit off). One daemon writes at a time, holding a lock in
            the database; with --standby a second one waits and takes over when the first ends.
            """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var readiness: ReadinessOptions
    @OptionGroup var metrics: MetricsOptions

    @Option(help: ArgumentHelp("always, interval=<ms> (1 to 3600000) or never.", valueName: "policy"))
    var durability: String = "always"

    @Option(
        help: "Milliseconds between heartbeats, 1 to 60000; a lost last event is noticed within one. (default: 500)",
        transform: BoundedNumber.integers(in: 1...60_000))
    var heartbeatMs: Int = 500

    @Option(help: "Segment size in MiB, 1 to 4096. (default: 64)", transform: BoundedNumber.integers(in: 1...4096))
    var segmentMib: Int = 64

    @Option(
        help:
            "Publication messages (each up to 32 KiB of events) queued per subscriber before the PUB socket drops them, 1 to 100000. (default: 1000)",
        transform: BoundedNumber.integers(in: Int32(1)...100_000))
    var publishHwm: Int32 = 1000

    @Option(
        help:
            "Memory (anonymous resident, MiB) past which the daemon drops every connection, and the messages libzmq was still receiving with them: a peer's message of frames without end is held whole until it ends. 64 to 1048576. (default: \(BusDaemon.defaultMaxMemoryMiB))",
        transform: BoundedNumber.integers(in: 64...1_048_576))
    var maxMemoryMib: Int = BusDaemon.defaultMaxMemoryMiB

    @Option(
        help: ArgumentHelp(
            "Also listen on TCP: HOST:PORT (PORT 1 to 65533) for ingress, PORT+1 for reads, PORT+2 for events.",
            valueName: "host:port"))
    var listen: String?

    @Option(help: ArgumentHelp("The daemon's CURVE secret key file (from `bureau keygen`).", valueName: "file"))
    var curveSecretFile: String?

    @Option(help: ArgumentHelp("Public keys of the TCP clients to let in, one per line.", valueName: "file"))
    var allowKeys: String?

    @OptionGroup var store: StoreOptions

    @Flag(help: "With --store: wait while another daemon writes to the store, and take over when it ends.")
    var standby = false

    @Option(
        help:
            "With --store: seconds to keep trying a PostgreSQL server that does not answer at start, 0 to 3600. (default: 30)",
        transform: BoundedNumber.integers(in: 0...3600))
    var storeWaitS: Int = 30

    @Flag(
        help: "Allow plain TCP without CURVE: anyone who reaches the port can publish. Warned about at every start.")
    var insecure = false

    @OptionGroup var traces: TraceOptions

    func validate() throws {
        if durability.hasPrefix("interval=") {
            do {
                _ = try BoundedNumber.integer(String(durability.dropFirst("interval=".count)), in: 1...3_600_000)
            } catch {
                throw ValidationError("--durability interval=MS: \(error)")
            }
        }
        do {
            _ = try Durability(parsing: durability)
        } catch {
            throw ValidationError("--durability: \(error)")
        }
        if listen == nil && (curveSecretFile != nil || allowKeys != nil || insecure) {
            throw ValidationError("--curve-secret-file, --allow-keys and --insecure apply only with --listen")
        }
        _ = try listenAddress()
        if try store.url() == nil, standby {
            throw ValidationError(
                "--standby applies only with --store: a daemon on files takes the data directory's lock")
        }
    }

    /// `--listen` as host and port, nil without it.
    func listenAddress() throws -> (host: String, port: Int)? {
        guard let listen else { return nil }
        let parts = listen.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty else {
            throw ValidationError("--listen takes HOST:PORT, not '\(listen)'")
        }
        do {
            // PORT+1 and PORT+2 must be ports too.
            return (String(parts[0]), try BoundedNumber.integer(String(parts[1]), in: 1...65533))
        } catch {
            throw ValidationError("--listen \(listen): the port \(error)")
        }
    }

    func run() async throws {
        global.bootstrapLogging()
        let logger = global.logger("bureau.bus")
        var configuration = BusDaemon.Configuration(location: global.location)
        configuration.durability = try Durability(parsing: durability)
        configuration.heartbeatInterval = .milliseconds(heartbeatMs)
        configuration.segmentSize = Int64(segmentMib) << 20
        configuration.publishHighWaterMark = publishHwm
        configuration.maxMemoryBytes = maxMemoryMib << 20
        configuration.tcp = try tcpListener()
        if let url = try store.url() {
            var options = PostgresEventLog.Options()
            options.durability = configuration.durability
            options.standby = standby
            options.connectWait = .seconds(storeWaitS)
            let fixed = options
            configuration.store = .init(name: "\(url)") { logger, shouldStop in
                var options = fixed
                options.shouldStopWaiting = shouldStop
                return try PostgresEventLog(url: url, options: options, logger: logger)
            }
        }
        if insecure, let (host, port) = try listenAddress() {
            let warning = Self.insecureWarning(host: host, port: port)
            if warning.loud {
                // Not left to the log level: written whatever it is.
                FileHandle.standardError.write(Data((warning.text + "\n").utf8))
                logger.critical("--insecure on a non-loopback address", metadata: ["cli.listen": "\(host):\(port)"])
            } else {
                logger.warning("\(warning.text)")
            }
        }
        // Bootstrapped before the daemon makes its metrics' handles.
        let endpoint = metrics.endpoint(process: "bus", location: global.location, logger: logger)
        let daemon = BusDaemon(configuration: configuration, logger: logger, onReady: { readiness.notify() })
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: daemon)] + [endpoint?.inGroup].compactMap { $0 },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await traces.exporting(process: "bus", global: global) { try await group.run() }
        } catch EventLogError.damaged(let damage) {
            throw CLIError(
                "\(damage)\nThe bus will not start on it. `bureau log verify --data \(global.location.dataDirectory)` "
                    + "lists the damage; `bureau log repair --data \(global.location.dataDirectory)` moves it aside.")
        }
    }

    /// What `--insecure` says at every start: a warning on a loopback address (only this
    /// machine can connect, but any local user can publish), and a banner nobody can miss on
    /// any other (anyone who reaches the port can read and publish everything).
    static func insecureWarning(host: String, port: Int) -> (loud: Bool, text: String) {
        let ports = "\(host):\(port)-\(port + 2)"
        guard isLoopback(host) else {
            return (
                true,
                """
                !!! INSECURE: the bus listens on \(ports) over plain TCP, without encryption or authentication.
                !!! Anyone who can reach this machine on those ports can read every event and publish any event.
                !!! Use CURVE instead: `bureau keygen`, then --curve-secret-file and --allow-keys.
                """
            )
        }
        return (
            false,
            "--insecure: the bus listens on \(ports) over plain TCP without CURVE; only this machine can "
                + "connect, but any local user can read and publish"
        )
    }

    /// Whether `host` can only be reached from this machine: localhost, 127.0.0.0/8, ::1.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, bare, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, bare, &v6) == 1 {
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            let mappedV4 = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            return bytes == [UInt8](repeating: 0, count: 15) + [1] || (mappedV4 && bytes[12] == 127)
        }
        return false
    }

    private func tcpListener() throws -> BusDaemon.TCPListener? {
        guard let (host, port) = try listenAddress() else { return nil }
        if insecure {
            return .init(host: host, port: port, security: .insecure)
        }
        guard let curveSecretFile, let allowKeys else {
            throw ValidationError(
                "TCP needs CURVE: give --curve-secret-file and --allow-keys (see `bureau keygen`), or --insecure")
        }
        let secret = try KeyFiles.readSecretKey(curveSecretFile)
        let server = try CurveKeyPair(secretKey: secret)
        let allowed = try KeyFiles.readAllowList(allowKeys)
        return .init(host: host, port: port, security: .curve(server: server, allowedClients: allowed))
    }
}
