import Foundation
import Yams

/// What is wrong in a deployment file, and where: the line and the field.
public struct DeploymentError: Error, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let field: String?
    public let problem: String

    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        return field.map { "\(location): \($0): \(problem)" } ?? "\(location): \(problem)"
    }
}

/// Reads `bureau.yaml`: the processes, their dependencies, restart and stop settings.
///
/// Unknown fields are errors (a misspelt `depends_on` must not silently do nothing); every
/// error names the file, the line and the field.
public enum DeploymentFile {
    static let processFields: Set<String> = ["command", "depends_on", "ready", "ready_timeout_s", "restart"]
    static let restartFields: Set<String> = ["initial_backoff_ms", "max_backoff_ms", "max_restarts"]
    static let topFields: Set<String> = ["processes", "restart", "ready_timeout_s", "stop_timeout_s", "log_max_bytes"]

    /// Parses the text of a deployment file; `file` names it in errors.
    public static func parse(_ text: String, file: String = "bureau.yaml") throws(DeploymentError) -> Deployment {
        let reader = Reader(file: file)
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else { throw reader.error(nil, nil, "the file is empty") }
            root = node
        } catch let error as DeploymentError {
            throw error
        } catch let error as YamlError {
            throw reader.yamlError(error)
        } catch {
            throw reader.error(nil, nil, "\(error)")
        }
        let top = try reader.mapping(root, field: nil)
        try reader.onlyKnown(top, Self.topFields, parent: nil)
        var defaults = RestartPolicy()
        if let restart = top["restart"] { defaults = try reader.restart(restart, field: "restart", base: defaults) }
        let readyTimeout = try reader.optional(top["ready_timeout_s"]) { node throws(DeploymentError) in
            try reader.seconds(node, field: "ready_timeout_s")
        }
        let stopTimeout = try reader.optional(top["stop_timeout_s"]) { node throws(DeploymentError) in
            try reader.seconds(node, field: "stop_timeout_s")
        }
        let logMaxBytes = try reader.optional(top["log_max_bytes"]) { node throws(DeploymentError) in
            try reader.integer(node, field: "log_max_bytes", minimum: 4096)
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
            let dependsOn =
                try reader.optional(fields["depends_on"]) { node throws(DeploymentError) in
                    try reader.strings(node, field: field + ".depends_on")
                } ?? []
            var spec = ProcessSpec(name: name, arguments: arguments, dependsOn: dependsOn)
            spec.reportsReadiness =
                try reader.optional(fields["ready"]) { node throws(DeploymentError) in
                    try reader.bool(node, field: field + ".ready")
                } ?? true
            spec.readyTimeout =
                try reader.optional(fields["ready_timeout_s"]) { node throws(DeploymentError) in
                    try reader.seconds(node, field: field + ".ready_timeout_s")
                }
                ?? readyTimeout ?? spec.readyTimeout
            spec.restart =
                try reader.optional(fields["restart"]) { node throws(DeploymentError) in
                    try reader.restart(node, field: field + ".restart", base: defaults)
                } ?? defaults
            specs.append(spec)
        }
        try reader.checkGraph(specs, processes: processes)
        var deployment = Deployment(processes: specs)
        if let stopTimeout { deployment.stopTimeout = stopTimeout }
        if let logMaxBytes { deployment.logMaxBytes = logMaxBytes }
        return deployment
    }

    /// The built-in default deployment.
    public static func defaultDeployment() throws(DeploymentError) -> Deployment {
        try parse(Deployment.defaultFile, file: "(built-in default)")
    }

    /// Reads YAML nodes, turning every surprise into an error with a line and a field.
    struct Reader {
        let file: String

        func error(_ line: Int?, _ field: String?, _ problem: String) -> DeploymentError {
            DeploymentError(file: file, line: line, field: field, problem: problem)
        }

        func yamlError(_ error: YamlError) -> DeploymentError {
            switch error {
            case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
                .composer(_, let problem, let mark, _):
                return self.error(mark.line, nil, "not valid YAML: \(problem)")
            case .duplicatedKeysInMapping(let duplicates, let context):
                return self.error(
                    context.mark.line, duplicates.first,
                    "appears more than once (\(duplicates.joined(separator: ", ")))")
            default:
                return self.error(nil, nil, "not valid YAML: \(error)")
            }
        }

        /// `read` applied to `node` when it is there.
        func optional<T>(_ node: Node?, _ read: (Node) throws(DeploymentError) -> T) throws(DeploymentError) -> T? {
            guard let node else { return nil }
            return try read(node)
        }

        func mapping(_ node: Node, field: String?) throws(DeploymentError) -> [(key: Node, value: Node)] {
            guard case .mapping(let mapping) = node else {
                throw error(node.mark?.line, field, "should be a mapping of names to values")
            }
            return Array(mapping)
        }

        func onlyKnown(
            _ pairs: [(key: Node, value: Node)], _ known: Set<String>, parent: String?
        ) throws(DeploymentError) {
            for (key, _) in pairs {
                let name = key.string ?? "?"
                guard known.contains(name) else {
                    let path = parent.map { "\($0).\(name)" } ?? name
                    throw error(key.mark?.line, path, "unknown field; known: \(known.sorted().joined(separator: ", "))")
                }
            }
        }

        func string(_ node: Node, field: String) throws(DeploymentError) -> String {
            guard case .scalar(let scalar) = node else { throw error(node.mark?.line, field, "should be text") }
            return scalar.string
        }

        func strings(_ node: Node, field: String) throws(DeploymentError) -> [String] {
            guard case .sequence(let sequence) = node else {
                throw error(node.mark?.line, field, "should be a list, e.g. [bus]")
            }
            var values: [String] = []
            for item in sequence { values.append(try string(item, field: field)) }
            return values
        }

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

        func integer(_ node: Node, field: String, minimum: Int = 0) throws(DeploymentError) -> Int {
            guard let text = node.string, let value = Int(text) else {
                throw error(node.mark?.line, field, "'\(node.string ?? "?")' is not a whole number")
            }
            guard value >= minimum else { throw error(node.mark?.line, field, "must be at least \(minimum)") }
            return value
        }

        func seconds(_ node: Node, field: String) throws(DeploymentError) -> Duration {
            guard let text = node.string, let value = Double(text), value > 0, value.isFinite else {
                throw error(node.mark?.line, field, "'\(node.string ?? "?")' is not a positive number of seconds")
            }
            return .milliseconds(Int64(value * 1000))
        }

        func bool(_ node: Node, field: String) throws(DeploymentError) -> Bool {
            switch node.string {
            case "true", "yes": return true
            case "false", "no": return false
            default: throw error(node.mark?.line, field, "'\(node.string ?? "?")' is not true or false")
            }
        }

        func restart(_ node: Node, field: String, base: RestartPolicy) throws(DeploymentError) -> RestartPolicy {
            let pairs = try mapping(node, field: field)
            try onlyKnown(pairs, DeploymentFile.restartFields, parent: field)
            var policy = base
            for (key, value) in pairs {
                let name = key.string ?? ""
                switch name {
                case "initial_backoff_ms":
                    policy.initialBackoff = .milliseconds(try integer(value, field: "\(field).\(name)", minimum: 1))
                case "max_backoff_ms":
                    policy.maximumBackoff = .milliseconds(try integer(value, field: "\(field).\(name)", minimum: 1))
                default:
                    policy.maximumRestarts = try integer(value, field: "\(field).\(name)")
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
}

extension [(key: Node, value: Node)] {
    subscript(_ name: String) -> Node? { first { $0.key.string == name }?.value }
}

/// `${NAME.ready}` in arguments: what process NAME said when it became ready.
enum Substitution {
    static func references(in argument: String) -> [String] {
        var names: [String] = []
        var rest = Substring(argument)
        while let start = rest.range(of: "${"), let end = rest[start.upperBound...].range(of: ".ready}") {
            names.append(String(rest[start.upperBound..<end.lowerBound]))
            rest = rest[end.upperBound...]
        }
        return names
    }

    static func apply(_ argument: String, ready: [String: String]) -> String {
        var result = argument
        for name in references(in: argument) {
            result = result.replacingOccurrences(of: "${\(name).ready}", with: ready[name] ?? "")
        }
        return result
    }
}
