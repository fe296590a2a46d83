import Guards
import Yams

/// Reads the nodes of a YAML file, turning every surprise into a ``YAMLFileError`` with a
/// line and a field. Files that people write (`bureau.yaml`, scenario files) read through it,
/// so that they report mistakes the same way; each adds its own readers in an extension.
///
/// What it reads is bounded: a file of at most ``maximumBytes``, at most ``maximumNodes``
/// nodes once aliases are expanded (a "billion laughs" document is refused before it is
/// composed) and at most ``maximumDepth`` levels of nesting; numbers within the range each
/// field states.
public struct YAMLReader: Sendable {
    /// The file's name in errors.
    public let file: String

    /// The largest file read: 1 MiB.
    public static let maximumBytes = 1 << 20
    /// The most nodes a document may have with its aliases expanded.
    public static let maximumNodes = 100_000
    /// The deepest nesting of mappings and lists.
    public static let maximumDepth = 64

    public init(file: String) {
        self.file = file
    }

    /// The text of the file at `path`, at most ``maximumBytes`` of UTF-8; errors name the file.
    public static func text(ofFile path: String) throws(YAMLFileError) -> String {
        do {
            return try BoundedFile.text(path, limit: maximumBytes)
        } catch {
            let problem =
                switch error {
                case .tooLarge(_, let limit):
                    "is larger than \(BoundedFile.size(limit)), the limit for a file the tool reads"
                case .notText: "is not UTF-8 text"
                case .unreadable(_, let reason): "cannot be read: \(reason)"
                }
            throw YAMLFileError(file: path, line: nil, field: nil, problem: problem)
        }
    }

    public func error(_ line: Int?, _ field: String?, _ problem: String) -> YAMLFileError {
        YAMLFileError(file: file, line: line, field: field, problem: problem)
    }

    /// The document's root node; an empty file, invalid YAML and a document over the limits
    /// (size, nodes with aliases expanded, depth) are errors.
    public func root(of text: String) throws(YAMLFileError) -> Node {
        guard text.utf8.count <= Self.maximumBytes else {
            throw error(
                nil, nil,
                "is larger than \(BoundedFile.size(Self.maximumBytes)), the limit for a file the tool reads")
        }
        do {
            try YAMLNodeBudget(maximumNodes: Self.maximumNodes, maximumDepth: Self.maximumDepth).check(text)
        } catch {
            throw self.error(error.line, nil, error.problem)
        }
        do {
            guard let node = try Yams.compose(yaml: text) else { throw error(nil, nil, "the file is empty") }
            return node
        } catch let error as YAMLFileError {
            throw error
        } catch let error as YamlError {
            throw yamlError(error)
        } catch {
            throw self.error(nil, nil, "not valid YAML: \(error)")
        }
    }

    func yamlError(_ error: YamlError) -> YAMLFileError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            return self.error(mark.line, nil, "not valid YAML: \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return self.error(
                context.mark.line, duplicates.first, "appears more than once (\(duplicates.joined(separator: ", ")))")
        default:
            return self.error(nil, nil, "not valid YAML: \(error)")
        }
    }

    /// `read` applied to `node` when it is there.
    public func optional<T>(_ node: Node?, _ read: (Node) throws(YAMLFileError) -> T) throws(YAMLFileError) -> T? {
        guard let node else { return nil }
        return try read(node)
    }

    public func mapping(_ node: Node, field: String?) throws(YAMLFileError) -> [(key: Node, value: Node)] {
        guard case .mapping(let mapping) = node else {
            throw error(node.mark?.line, field, "should be a mapping of names to values")
        }
        return Array(mapping)
    }

    /// Fails on the first key that is not in `known`: a misspelt field must not silently do nothing.
    public func onlyKnown(
        _ pairs: [(key: Node, value: Node)], _ known: Set<String>, parent: String?
    ) throws(YAMLFileError) {
        for (key, _) in pairs {
            let name = key.string ?? "?"
            guard known.contains(name) else {
                let path = parent.map { "\($0).\(name)" } ?? name
                throw error(key.mark?.line, path, "unknown field; known: \(known.sorted().joined(separator: ", "))")
            }
        }
    }

    /// A scalar's text; with `nonEmpty`, empty text is an error too.
    public func string(_ node: Node, field: String, nonEmpty: Bool = false) throws(YAMLFileError) -> String {
        guard case .scalar(let scalar) = node, !(nonEmpty && scalar.string.isEmpty) else {
            throw error(node.mark?.line, field, "should be text")
        }
        return scalar.string
    }

    public func strings(_ node: Node, field: String) throws(YAMLFileError) -> [String] {
        guard case .sequence(let sequence) = node else {
            throw error(node.mark?.line, field, "should be a list, e.g. [bus]")
        }
        var values: [String] = []
        for item in sequence { values.append(try string(item, field: field)) }
        return values
    }

    /// A whole number within `range`.
    public func integer(_ node: Node, field: String, in range: ClosedRange<Int>) throws(YAMLFileError) -> Int {
        let text = try scalar(node, field: field)
        do {
            return try BoundedNumber.integer(text, in: range)
        } catch {
            throw self.error(node.mark?.line, field, error.description)
        }
    }

    /// A number of seconds from 0.001 to `maximum`, fractions allowed, to the millisecond.
    public func seconds(_ node: Node, field: String, maximum: Double = 86_400) throws(YAMLFileError) -> Duration {
        let text = try scalar(node, field: field)
        do {
            return try BoundedNumber.seconds(text, in: 0.001...maximum)
        } catch {
            throw self.error(
                node.mark?.line, field, "'\(error.value)' \(error.problem) (give seconds from 0.001 to \(Int(maximum)))"
            )
        }
    }

    /// A scalar's text, for numbers: a list or a mapping is not one.
    func scalar(_ node: Node, field: String) throws(YAMLFileError) -> String {
        guard case .scalar(let scalar) = node else { throw error(node.mark?.line, field, "should be a number") }
        return scalar.string
    }

    public func bool(_ node: Node, field: String) throws(YAMLFileError) -> Bool {
        switch node.string {
        case "true", "yes": return true
        case "false", "no": return false
        default: throw error(node.mark?.line, field, "'\(node.string ?? "?")' is not true or false")
        }
    }
}

extension [(key: Node, value: Node)] {
    /// The value of the key `name`, if the mapping has it.
    public subscript(_ name: String) -> Node? { first { $0.key.string == name }?.value }
}
