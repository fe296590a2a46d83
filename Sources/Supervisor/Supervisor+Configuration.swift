import Bus

extension Supervisor {
    /// What a supervisor runs, and how.
    public struct Configuration: Sendable {
        public var deployment: Deployment
        public var location: BusLocation
        /// The `bureau` executable children run.
        public var executable: String
        /// Echo the processes' output to the terminal with name prefixes.
        public var console: Bool
        /// Arguments of a front-end run in the foreground once everything is ready; stopping
        /// it stops the deployment.
        public var frontEnd: [String]?
        /// Called once every process is ready, with the time it took.
        public var onReady: @Sendable (Duration) -> Void = { _ in }

        public init(deployment: Deployment, location: BusLocation, executable: String, console: Bool) {
            self.deployment = deployment
            self.location = location
            self.executable = executable
            self.console = console
        }
    }
}
