/// A deployment: the processes `bureau up` runs, how they depend on each other and how they restart.
///
/// Every process runs the `bureau` executable with its `arguments`; the supervisor adds the
/// data directory (through `BUREAU_DATA`) and, for a process that reports readiness,
/// `--ready-fd`. An argument may name what another process reported when it became ready:
/// `${rates-server.ready}` is replaced by the rest of that process's READY line (a server's URL).
public struct Deployment: Sendable, Equatable {
    public var processes: [ProcessSpec]
    /// How long a stopping process has between SIGTERM and SIGKILL.
    public var stopTimeout: Duration
    /// A process's log file is rotated when it reaches this size; three old files are kept.
    public var logMaxBytes: Int
    /// The bus on another machine that these processes join; nil when the deployment runs its own.
    public var remoteBus: RemoteBus?
    /// The PostgreSQL store (`store: postgres://…`), given to every child as `BUREAU_STORE`: the
    /// bus keeps its log there and reducer hosts their snapshots, also on a host that joins a
    /// bus elsewhere, so that a reducer can move between hosts.
    public var store: String?
    /// Command URLs `bureau up` sends once every process is ready, in order (`setup:`), as
    /// `bureau send` would: settings that are events, such as the commission schedule.
    public var setup: [String] = []

    public init(
        processes: [ProcessSpec], stopTimeout: Duration = .seconds(10), logMaxBytes: Int = 10 << 20,
        remoteBus: RemoteBus? = nil
    ) {
        self.processes = processes
        self.stopTimeout = stopTimeout
        self.logMaxBytes = logMaxBytes
        self.remoteBus = remoteBus
    }

    /// The processes in an order that starts every dependency before what depends on it.
    ///
    /// Valid deployments only (see ``DeploymentFile``): names unique, dependencies known, no cycle.
    public var startOrder: [ProcessSpec] {
        var ordered: [ProcessSpec] = []
        var placed = Set<String>()
        var remaining = processes
        while !remaining.isEmpty {
            let ready = remaining.filter { $0.dependsOn.allSatisfy(placed.contains) }
            guard !ready.isEmpty else { return ordered + remaining }
            ordered += ready
            placed.formUnion(ready.map(\.name))
            remaining.removeAll { placed.contains($0.name) }
        }
        return ordered
    }
}

extension Deployment {
    /// The built-in deployment: what `bureau up` runs without a file and `bureau init` writes out.
    public static let defaultFile = """
        # bureau.yaml: the processes `bureau up` runs. Edit, then `bureau up --file bureau.yaml`.
        #
        # Each process runs `bureau <command>`; `bureau <command> --help` explains the options.
        # ${NAME.ready} is what process NAME reported when it became ready (a server's URL).
        # Servers listen on a free loopback port (--port 0) so that deployments never collide;
        # give them fixed ports (8561, 8562) to reach them with curl.

        processes:
          bus:
            command: bus
          rates-server:
            command: serve rates --port 0 --pace 0.2
          booking-server:
            command: serve booking --port 0 --latency 300
          reducers:
            command: run watchlist converter reservations alerts
            depends_on: [bus]
          rates-adapter:
            command: run rates-adapter --set rates-url=${rates-server.ready}/stats/eurofxref/eurofxref-daily.xml
            depends_on: [bus, rates-server]
          booking-adapter:
            command: run booking-adapter --set booking-url=${booking-server.ready}
            depends_on: [bus, booking-server]

        # Command URLs sent once every process is ready, in order, as `bureau send` sends them:
        # here the commission the bureau charges on each currency it sells (a decimal fraction,
        # 0.005 is 0.5 %; a currency not listed is charged nothing). A rate set again is kept.
        setup:
          - bureau://reservations/commission?currency=USD&rate=0.005
          - bureau://reservations/commission?currency=GBP&rate=0.0075
          - bureau://reservations/commission?currency=EUR&rate=0.005
          - bureau://reservations/commission?currency=JPY&rate=0.01

        # Defaults for every process; a process may override them under its own `restart:`.
        restart:
          initial_backoff_ms: 500
          max_backoff_ms: 15000
          max_restarts: 5
          reset_after_s: 60         # a process that ran this long before failing counts afresh

        ready_timeout_s: 60
        stop_timeout_s: 10
        log_max_bytes: 10485760

        """
}
