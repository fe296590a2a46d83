/// One process of a deployment.
public struct ProcessSpec: Sendable, Equatable {
    public var name: String
    /// The `bureau` subcommand and its arguments, e.g. `["run", "watchlist"]`.
    public var arguments: [String]
    public var dependsOn: [String]
    /// Whether the process writes READY on `--ready-fd` once it is ready; without it, it is
    /// ready as soon as it started.
    public var reportsReadiness: Bool
    public var readyTimeout: Duration
    public var restart: RestartPolicy

    public init(
        name: String, arguments: [String], dependsOn: [String] = [], reportsReadiness: Bool = true,
        readyTimeout: Duration = .seconds(60), restart: RestartPolicy = RestartPolicy()
    ) {
        self.name = name
        self.arguments = arguments
        self.dependsOn = dependsOn
        self.reportsReadiness = reportsReadiness
        self.readyTimeout = readyTimeout
        self.restart = restart
    }
}
