/// What is wrong in a YAML file a person wrote, and where: the file, the line and the field.
public struct YAMLFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    /// A dotted path to the field, e.g. `processes.bus.command`; nil for the whole file.
    public let field: String?
    public let problem: String

    public init(file: String, line: Int?, field: String?, problem: String) {
        self.file = file
        self.line = line
        self.field = field
        self.problem = problem
    }

    /// `file:line: field: problem`.
    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        return field.map { "\(location): \($0): \(problem)" } ?? "\(location): \(problem)"
    }
}
