import Bus
import EventLog
import Logging
import Metrics
import ZeroMQ

extension BusDaemon {
    /// The default of ``Configuration/maxMemoryBytes``, in MiB: above what the daemon was measured
    /// to hold at its busiest (`MemoryBoundTests`: four producers sending the largest requests at
    /// once, a subscriber that never reads; peaks of 99 to 180 MiB resident, less of it anonymous),
    /// below the bound README states. README's sum of the worst cases is higher: a load that
    /// reaches it has its connections dropped and sends again (README, "Limits").
    public static let defaultMaxMemoryMiB = 160

    /// How a bus daemon runs; the defaults are those of `bureau bus`.
    public struct Configuration: Sendable {
        public var location: BusLocation
        public var durability: Durability = .always
        /// How often the daemon publishes a heartbeat; a subscriber notices a lost last message within one.
        public var heartbeatInterval: Duration = .milliseconds(500)
        public var segmentSize: Int64 = 64 << 20
        /// How many recent event ids are remembered to recognise retried publishes.
        public var deduplicationWindow = 100_000
        /// Publication messages (each up to ``BusLimits/maxPublicationFrameBytes`` of events) queued
        /// per subscriber before the PUB socket drops (subscribers then read the log).
        public var publishHighWaterMark: Int32 = 1000
        public var maxEnvelopeBytes = BusLimits.maxEnvelopeBytes
        /// Anonymous resident memory past which the daemon drops every connection, and with it
        /// whatever messages libzmq was still receiving (``MemoryGuard``); README, "Limits".
        /// Nil for none: only a daemon in a process of its own can tell its memory from other
        /// work's (`bureau bus` sets ``BusDaemon/defaultMaxMemoryMiB``; tests and benchmarks
        /// that run a daemon in their own process leave it nil).
        public var maxMemoryBytes: Int?
        /// Also listen on TCP, for processes on other machines.
        public var tcp: TCPListener?
        /// Every file system call of the log goes through it: tests inject faults here.
        public var fileSystem: any FileSystem = PosixFileSystem()
        /// Where the log is kept instead of the data directory's files (a PostgreSQL store);
        /// nil for the files. The data directory still holds the sockets and bus.json.
        public var store: Store?
        /// Where the daemon's metrics go: swift-metrics' bootstrapped factory when nil (a
        /// process's composition root picks the backend), or a test's own.
        public var metricsFactory: (any MetricsFactory)?

        public init(location: BusLocation) {
            self.location = location
        }
    }

    /// A log kept elsewhere than the data directory: how to open it, and its name for messages.
    public struct Store: Sendable {
        public let name: String
        /// Opens the log; may wait (a standby), polling the second argument to give up when it says stop.
        public let open: @Sendable (Logger, @escaping @Sendable () -> Bool) throws -> any EventLog

        public init(
            name: String, open: @escaping @Sendable (Logger, @escaping @Sendable () -> Bool) throws -> any EventLog
        ) {
            self.name = name
            self.open = open
        }
    }

    /// TCP endpoints: `port` for ingress, `port + 1` for reads, `port + 2` for events; port 0
    /// lets the system choose three free ports (bus.json then names them).
    public struct TCPListener: Sendable {
        public enum Security: Sendable {
            /// CURVE encryption; only clients whose public keys are listed may connect.
            case curve(server: CurveKeyPair, allowedClients: Set<String>)
            /// Plain TCP: anyone who can reach the port can publish. Only with `--insecure`.
            case insecure
        }

        public var host: String
        public var port: Int
        public var security: Security

        public init(host: String, port: Int, security: Security) {
            self.host = host
            self.port = port
            self.security = security
        }

        var endpoints: BusEndpoints {
            func endpoint(_ offset: Int) -> String { port == 0 ? "tcp://\(host):*" : "tcp://\(host):\(port + offset)" }
            var endpoints = BusEndpoints(ingress: endpoint(0), read: endpoint(1), events: endpoint(2))
            if case .curve(let server, _) = security {
                endpoints.serverKey = server.publicKey
            }
            return endpoints
        }
    }
}
