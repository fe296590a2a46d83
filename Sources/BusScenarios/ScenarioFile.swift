import BureauSchemas
import Bus
import Foundation
import Runtime
import YAMLFile
import Yams

/// Reads scenario files (YAML; the schema is `Schemas/scenario.schema.json`).
///
/// Unknown fields and unknown event types are errors, each naming the file, the line and the
/// field, so that a typo cannot make a scenario silently check less.
public enum ScenarioFile {
    static let topFields: Set<String> = ["description", "given", "scenarios"]
    static let scenarioFields: Set<String> = ["name", "given", "when", "expect", "exhaustive", "timeout_s"]
    static let stepFields: Set<String> = ["type", "payload", "command"]
    static let expectFields: Set<String> = ["type", "fields", "capture"]

    /// Reads and parses the file at `path` (at most ``YAMLReader/maximumBytes``); see
    /// ``parse(_:file:router:)``.
    public static func load(_ path: String, router: CommandRouter? = nil) throws(ScenarioFileError) -> ScenarioSuite {
        try parse(try YAMLReader.text(ofFile: path), file: path, router: router)
    }

    /// Parses the text of a scenario file; `file` names it in errors. With a `router`, every
    /// command URL without a `${variable}` must route, so that a typo fails before anything starts.
    public static func parse(
        _ text: String, file: String, router: CommandRouter? = nil
    ) throws(ScenarioFileError) -> ScenarioSuite {
        let suite = try parseUnchecked(text, file: file)
        guard let router else { return suite }
        let steps = suite.given + suite.scenarios.flatMap { $0.given + [$0.when] }
        for case .command(let url, let line) in steps where !url.contains("${") {
            do {
                _ = try router.route(url)
            } catch {
                throw ScenarioFileError(file: file, line: line, field: "command", problem: error.description)
            }
        }
        return suite
    }

    static func parseUnchecked(_ text: String, file: String) throws(ScenarioFileError) -> ScenarioSuite {
        let reader = YAMLReader(file: file)
        let root = try reader.root(of: text)
        let top = try reader.mapping(root, field: nil)
        try reader.onlyKnown(top, topFields, parent: nil)
        let given = try reader.steps(top["given"], field: "given")
        guard let list = top["scenarios"] else {
            throw reader.error(root.mark?.line, "scenarios", "is missing: a file needs at least one scenario")
        }
        guard case .sequence(let items) = list, !items.isEmpty else {
            throw reader.error(list.mark?.line, "scenarios", "should be a list of scenarios")
        }
        var scenarios: [Scenario] = []
        var names: Set<String> = []
        for (index, item) in items.enumerated() {
            let scenario = try reader.scenario(item, field: "scenarios[\(index)]")
            guard names.insert(scenario.name).inserted else {
                throw reader.error(item.mark?.line, "scenarios[\(index)].name", "'\(scenario.name)' is used twice")
            }
            scenarios.append(scenario)
        }
        return ScenarioSuite(file: file, given: given, scenarios: scenarios)
    }

}

/// The readers only a scenario file needs.
extension YAMLReader {
    func text(_ node: Node, field: String) throws(ScenarioFileError) -> String {
        try string(node, field: field, nonEmpty: true)
    }

    func scenario(_ node: Node, field: String) throws(ScenarioFileError) -> Scenario {
        let fields = try mapping(node, field: field)
        try onlyKnown(fields, ScenarioFile.scenarioFields, parent: field)
        guard let nameNode = fields["name"] else { throw error(node.mark?.line, field + ".name", "is missing") }
        let name = try text(nameNode, field: field + ".name")
        let label = "scenario '\(name)'"
        guard let whenNode = fields["when"] else { throw error(node.mark?.line, label + ".when", "is missing") }
        let when = try step(whenNode, field: label + ".when")
        guard let expectNode = fields["expect"] else {
            throw error(node.mark?.line, label + ".expect", "is missing; write `expect: []` to expect nothing")
        }
        guard case .sequence(let expectItems) = expectNode else {
            throw error(expectNode.mark?.line, label + ".expect", "should be a list of events")
        }
        var expected: [ExpectedEvent] = []
        for (index, item) in expectItems.enumerated() {
            expected.append(try expectation(item, field: "\(label).expect[\(index)]"))
        }
        var exhaustive = true
        if let flag = fields["exhaustive"] {
            guard let value = flag.bool else {
                throw error(flag.mark?.line, label + ".exhaustive", "'\(flag.string ?? "?")' is not true or false")
            }
            exhaustive = value
        }
        let timeout = try optional(fields["timeout_s"]) { node throws(ScenarioFileError) in
            try seconds(node, field: label + ".timeout_s", maximum: 3600)
        }
        return Scenario(
            name: name, line: node.mark?.line ?? 0, given: try steps(fields["given"], field: label + ".given"),
            when: when, expect: expected, exhaustive: exhaustive, timeout: timeout)
    }

    func steps(_ node: Node?, field: String) throws(ScenarioFileError) -> [ScenarioStep] {
        guard let node else { return [] }
        guard case .sequence(let items) = node else {
            throw error(node.mark?.line, field, "should be a list of steps (an event or a command each)")
        }
        var steps: [ScenarioStep] = []
        for (index, item) in items.enumerated() { steps.append(try step(item, field: "\(field)[\(index)]")) }
        return steps
    }

    func step(_ node: Node, field: String) throws(ScenarioFileError) -> ScenarioStep {
        let fields = try mapping(node, field: field)
        try onlyKnown(fields, ScenarioFile.stepFields, parent: field)
        let line = node.mark?.line ?? 0
        switch (fields["command"], fields["type"]) {
        case (let command?, nil):
            guard fields["payload"] == nil else {
                throw error(line, field + ".payload", "a command takes its values in the URL")
            }
            return .command(url: try text(command, field: field + ".command"), line: line)
        case (nil, let type?):
            let name = try eventType(type, field: field + ".type")
            let payload = try fields["payload"].map { node throws(ScenarioFileError) in
                try fieldNames(node, of: name, field: field + ".payload")
                return try json(node, field: field + ".payload")
            }
            return .event(type: name, payload: payload ?? .object([]), line: line)
        default:
            throw error(line, field, "needs either `command: bureau://…` or `type:` (with an optional `payload:`)")
        }
    }

    func expectation(_ node: Node, field: String) throws(ScenarioFileError) -> ExpectedEvent {
        let fields = try mapping(node, field: field)
        try onlyKnown(fields, ScenarioFile.expectFields, parent: field)
        guard let typeNode = fields["type"] else { throw error(node.mark?.line, field + ".type", "is missing") }
        let type = try eventType(typeNode, field: field + ".type")
        let pattern = try fields["fields"].map { node throws(ScenarioFileError) in
            try fieldNames(node, of: type, field: field + ".fields")
            return try json(node, field: field + ".fields")
        }
        var captures: [(variable: String, path: String)] = []
        if let captureNode = fields["capture"] {
            for (key, value) in try mapping(captureNode, field: field + ".capture") {
                let variable = try text(key, field: field + ".capture")
                guard variable.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                    throw error(
                        key.mark?.line, field + ".capture",
                        "'\(variable)' is not a variable name (letters, digits and _)")
                }
                captures.append((variable, try text(value, field: field + ".capture.\(variable)")))
            }
        }
        return ExpectedEvent(
            type: type, fields: pattern ?? .object([]), captures: captures, line: node.mark?.line ?? 0)
    }

    /// Fails on a key that is not a field of `type` (in protobuf's JSON mapping): a misspelt
    /// field in a pattern would otherwise match an absent one and check nothing.
    func fieldNames(_ node: Node, of type: String, field: String) throws(ScenarioFileError) {
        guard let messageType = SchemaRegistry.messageType(named: type) else { return }
        for (key, _) in try mapping(node, field: field) {
            let name = try text(key, field: field)
            // null is every field's default, so this decodes exactly when the field exists.
            do {
                _ = try messageType.init(jsonString: "{\(JSONText.quoted(name)):null}")
            } catch {
                throw self.error(key.mark?.line, "\(field).\(name)", "\(type) has no field '\(name)'")
            }
        }
    }

    func eventType(_ node: Node, field: String) throws(ScenarioFileError) -> String {
        let name = try text(node, field: field)
        guard SchemaRegistry.messageType(named: name) != nil else {
            let package = name.split(separator: ".").dropLast().joined(separator: ".")
            let near = SchemaRegistry.eventTypeNames.filter { $0.hasPrefix(package + ".") }
            throw error(
                node.mark?.line, field,
                "unknown event type '\(name)'"
                    + (near.isEmpty
                        ? "; types are named like bureau.watchlist.PairAdded"
                        : "; known here: "
                            + near.joined(separator: ", ")))
        }
        return name
    }

    /// YAML as JSON. Plain `true`/`false` and `null`/`~` keep their meaning; every other
    /// scalar is text, which protobuf's JSON reads as a number where the field is one.
    func json(_ node: Node, field: String) throws(ScenarioFileError) -> JSONValue {
        switch node {
        case .scalar(let scalar):
            if scalar.style == .plain {
                switch scalar.string {
                case "true": return .bool(true)
                case "false": return .bool(false)
                case "null", "~": return .null
                default: break
                }
            }
            return .string(scalar.string)
        case .sequence(let items):
            var values: [JSONValue] = []
            for (index, item) in items.enumerated() { values.append(try json(item, field: "\(field)[\(index)]")) }
            return .array(values)
        case .mapping(let mapping):
            var members: [(String, JSONValue)] = []
            for (key, value) in mapping {
                let name = try text(key, field: field)
                members.append((name, try json(value, field: "\(field).\(name)")))
            }
            return .object(members)
        case .alias:
            throw error(node.mark?.line, field, "aliases are not supported")
        }
    }
}
