import Foundation
import YAMLFile
import Yams
import ZeroMQBus

/// What is wrong in a deployment file, and where: the line and the field.
public typealias DeploymentError = YAMLFileError

/// Reads `bureau.yaml`: the processes, their dependencies, restart and stop settings.
///
/// Unknown fields are errors (a misspelt `depends_on` must not silently do nothing); every
/// error names the file, the line and the field. Every number has bounds (see ``Limits``), and
/// the file itself those of ``YAMLReader`` (size, nodes with aliases expanded, depth).
public enum DeploymentFile {
    /// The range of each number a deployment file may give.
    public enum Limits {
        public static let backoffMilliseconds = 1...86_400_000
        public static let maximumRestarts = 0...1000
        public static let resetAfterSeconds = 86_400.0
        public static let readyTimeoutSeconds = 86_400.0
        public static let stopTimeoutSeconds = 3600.0
        public static let logMaxBytes = 4096...(1 << 40)
    }

    static let processFields: Set<String> = ["command", "depends_on", "ready", "ready_timeout_s", "restart"]
    static let restartFields: Set<String> = ["initial_backoff_ms", "max_backoff_ms", "max_restarts", "reset_after_s"]
    static let topFields: Set<String> = [
        "processes", "restart", "ready_timeout_s", "stop_timeout_s", "log_max_bytes", "bus", "store", "setup",
    ]
    static let busFields: Set<String> = ["url", "server_key", "client_key", "wait_s"]

    /// Parses the text of a deployment file; `file` names it in errors.
    public static func parse(_ text: String, file: String = "bureau.yaml") throws(DeploymentError) -> Deployment {
        let reader = YAMLReader(file: file)
        let root = try reader.root(of: text)
        let top = try reader.mapping(root, field: nil)
        try reader.onlyKnown(top, Self.topFields, parent: nil)
        var defaults = RestartPolicy()
        if let restart = top["restart"] { defaults = try reader.restart(restart, field: "restart", base: defaults) }
        let readyTimeout = try reader.optional(top["ready_timeout_s"]) { node throws(DeploymentError) in
            try reader.seconds(node, field: "ready_timeout_s", maximum: Limits.readyTimeoutSeconds)
        }
        let stopTimeout = try reader.optional(top["stop_timeout_s"]) { node throws(DeploymentError) in
            try reader.seconds(node, field: "stop_timeout_s", maximum: Limits.stopTimeoutSeconds)
        }
        let logMaxBytes = try reader.optional(top["log_max_bytes"]) { node throws(DeploymentError) in
            try reader.integer(node, field: "log_max_bytes", in: Limits.logMaxBytes)
        }
        let remoteBus = try reader.optional(top["bus"]) { node throws(DeploymentError) in
            try reader.remoteBus(node, file: file, maximumWait: Limits.readyTimeoutSeconds)
        }
        let store = try reader.optional(top["store"]) { node throws(DeploymentError) in
            let url = try reader.string(node, field: "store", nonEmpty: true)
            guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                throw reader.error(node.mark?.line, "store", "takes postgres://USER@HOST:PORT/DATABASE, not '\(url)'")
            }
            return url
        }
        guard let processNode = top["processes"] else {
            throw reader.error(root.mark?.line, "processes", "is missing: a deployment needs at least one process")
        }
        let processes = try reader.mapping(processNode, field: "processes")
        guard !processes.isEmpty else { throw reader.error(processNode.mark?.line, "processes", "is empty") }
        var specs: [ProcessSpec] = []
        for (key, value) in processes {
            let name = try reader.string(key, field: "processes")
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw reader.error(
                    key.mark?.line, "processes", "'\(name)' is not a process name (letters, digits, - and _)")
            }
            let field = "processes.\(name)"
            let fields = try reader.mapping(value, field: field)
            try reader.onlyKnown(fields, Self.processFields, parent: field)
            guard let command = fields["command"] else {
                throw reader.error(value.mark?.line, field + ".command", "is missing")
            }
            let arguments = try reader.arguments(command, field: field + ".command")
            var dependsOn =
                try reader.optional(fields["depends_on"]) { node throws(DeploymentError) in
                    try reader.strings(node, field: field + ".depends_on")
                } ?? []
            if let remoteBus {
                guard arguments.first != "bus" else {
                    throw reader.error(
                        command.mark?.line, field + ".command",
                        "runs a bus, but this deployment joins the bus at \(remoteBus.url) (bus.url)")
                }
                // The bus on another machine answers before anything here starts.
                if !processes.contains(where: { $0.key.string == "bus" }) { dependsOn.removeAll { $0 == "bus" } }
            }
            var spec = ProcessSpec(name: name, arguments: arguments, dependsOn: dependsOn)
            spec.reportsReadiness =
                try reader.optional(fields["ready"]) { node throws(DeploymentError) in
                    try reader.bool(node, field: field + ".ready")
                } ?? true
            spec.readyTimeout =
                try reader.optional(fields["ready_timeout_s"]) { node throws(DeploymentError) in
                    try reader.seconds(node, field: field + ".ready_timeout_s", maximum: Limits.readyTimeoutSeconds)
                }
                ?? readyTimeout ?? spec.readyTimeout
            spec.restart =
                try reader.optional(fields["restart"]) { node throws(DeploymentError) in
                    try reader.restart(node, field: field + ".restart", base: defaults)
                } ?? defaults
            specs.append(spec)
        }
        try reader.checkGraph(specs, processes: processes)
        var deployment = Deployment(processes: specs, remoteBus: remoteBus)
        deployment.store = store
        deployment.setup =
            try reader.optional(top["setup"]) { node throws(DeploymentError) in
                try reader.strings(node, field: "setup")
            } ?? []
        for (index, url) in deployment.setup.enumerated() where !url.hasPrefix("bureau://") {
            throw reader.error(
                top["setup"]?.mark?.line, "setup[\(index)]",
                "is not a command URL (bureau://MODULE/COMMAND?…): '\(url)'")
        }
        if let stopTimeout { deployment.stopTimeout = stopTimeout }
        if let logMaxBytes { deployment.logMaxBytes = logMaxBytes }
        return deployment
    }

    /// The built-in default deployment.
    public static func defaultDeployment() throws(DeploymentError) -> Deployment {
        try parse(Deployment.defaultFile, file: "(built-in default)")
    }

}

/// The readers only a deployment file needs.
extension YAMLReader {
    /// A command as text split at spaces, or as a list of arguments.
    func arguments(_ node: Node, field: String) throws(DeploymentError) -> [String] {
        let arguments: [String]
        if case .sequence = node {
            arguments = try strings(node, field: field)
        } else {
            arguments = try string(node, field: field).split(whereSeparator: \.isWhitespace).map(String.init)
        }
        guard let first = arguments.first, !first.hasPrefix("-") else {
            throw error(
                node.mark?.line, field, "should start with a bureau subcommand, e.g. 'bus' or 'run watchlist'")
        }
        return arguments
    }

    /// `bus:`: the bus on another machine a deployment joins. Key paths are relative to the
    /// deployment file's directory.
    func remoteBus(
        _ node: Node, file: String, maximumWait: Double, field: String? = "bus"
    ) throws(DeploymentError) -> Deployment.RemoteBus {
        let name = { (child: String) in field.map { "\($0).\(child)" } ?? child }
        let fields = try mapping(node, field: field)
        try onlyKnown(fields, DeploymentFile.busFields, parent: field)
        guard let urlNode = fields["url"] else {
            throw error(node.mark?.line, name("url"), "is missing: the tcp://HOST:PORT of the bus to join")
        }
        let url = try string(urlNode, field: name("url"))
        do {
            _ = try ZeroMQBus.RemoteBus(url: url, curve: nil)
        } catch {
            throw self.error(urlNode.mark?.line, name("url"), "\(error)")
        }
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        func path(_ key: String) throws(DeploymentError) -> String? {
            try optional(fields[key]) { node throws(DeploymentError) in
                let path = try string(node, field: name(key), nonEmpty: true)
                return path.hasPrefix("/") ? path : directory + "/" + path
            }
        }
        var remote = Deployment.RemoteBus(
            url: url, serverKeyFile: try path("server_key"), clientKeyFile: try path("client_key"))
        if let wait = try optional(
            fields["wait_s"],
            { node throws(DeploymentError) in
                try seconds(node, field: name("wait_s"), maximum: maximumWait)
            })
        {
            remote.waitTimeout = wait
        }
        return remote
    }

    func restart(_ node: Node, field: String, base: RestartPolicy) throws(DeploymentError) -> RestartPolicy {
        let pairs = try mapping(node, field: field)
        try onlyKnown(pairs, DeploymentFile.restartFields, parent: field)
        var policy = base
        for (key, value) in pairs {
            let name = key.string ?? ""
            switch name {
            case "initial_backoff_ms":
                policy.initialBackoff = .milliseconds(
                    try integer(value, field: "\(field).\(name)", in: DeploymentFile.Limits.backoffMilliseconds))
            case "max_backoff_ms":
                policy.maximumBackoff = .milliseconds(
                    try integer(value, field: "\(field).\(name)", in: DeploymentFile.Limits.backoffMilliseconds))
            case "reset_after_s":
                policy.resetAfter = try seconds(
                    value, field: "\(field).\(name)", maximum: DeploymentFile.Limits.resetAfterSeconds)
            default:
                policy.maximumRestarts = try integer(
                    value, field: "\(field).\(name)", in: DeploymentFile.Limits.maximumRestarts)
            }
        }
        return policy
    }

    /// Every dependency names a process; no process depends on itself through others.
    func checkGraph(_ specs: [ProcessSpec], processes: [(key: Node, value: Node)]) throws(DeploymentError) {
        let names = specs.map(\.name)
        let line: (String) -> Int? = { name in processes.first { $0.key.string == name }?.value.mark?.line }
        for spec in specs {
            for dependency in spec.dependsOn where !names.contains(dependency) {
                throw error(
                    line(spec.name), "processes.\(spec.name).depends_on",
                    "'\(dependency)' is not a process of this deployment")
            }
            for argument in spec.arguments {
                for reference in Substitution.references(in: argument) where !spec.dependsOn.contains(reference) {
                    throw error(
                        line(spec.name), "processes.\(spec.name).command",
                        "${\(reference).ready} needs '\(reference)' in depends_on")
                }
            }
        }
        let ordered = Deployment(processes: specs).startOrder
        var placed = Set<String>()
        for spec in ordered {
            guard spec.dependsOn.allSatisfy(placed.contains) else {
                throw error(line(spec.name), "processes.\(spec.name).depends_on", "is part of a dependency cycle")
            }
            placed.insert(spec.name)
        }
    }
}
