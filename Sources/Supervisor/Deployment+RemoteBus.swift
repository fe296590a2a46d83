import Foundation

extension Deployment {
    /// A bus on another machine that this host's processes join (the deployment file's `bus:`),
    /// instead of a `bus` process of their own.
    ///
    /// The supervisor waits for it to answer before it starts anything, gives every child its
    /// address and keys (`BUREAU_BUS`, `BUREAU_SERVER_KEY`, `BUREAU_CLIENT_KEY`), publishes its
    /// own events on it and shows it in `bureau ps`. Snapshots stay in this host's data directory.
    public struct RemoteBus: Sendable, Equatable {
        /// `tcp://HOST:PORT`, the daemon's `--listen` address.
        public var url: String
        /// The daemon's public key file (absolute); nil with ``clientKeyFile`` for plain TCP.
        public var serverKeyFile: String?
        /// This host's secret key file (absolute).
        public var clientKeyFile: String?
        /// How long the supervisor waits for the bus to answer before it gives up.
        public var waitTimeout: Duration

        public init(url: String, serverKeyFile: String?, clientKeyFile: String?, waitTimeout: Duration = .seconds(60)) {
            self.url = url
            self.serverKeyFile = serverKeyFile
            self.clientKeyFile = clientKeyFile
            self.waitTimeout = waitTimeout
        }

        /// The variables that make a `bureau` command join this bus.
        public var environment: [String: String] {
            var variables = ["BUREAU_BUS": url]
            variables["BUREAU_SERVER_KEY"] = serverKeyFile
            variables["BUREAU_CLIENT_KEY"] = clientKeyFile
            return variables
        }
    }
}
