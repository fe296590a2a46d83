import Foundation

/// Turns `bureau://module/command?name=value&…` into the module's request event, or a precise error.
public struct CommandRouter: Sendable {
    public let commands: [CommandSpec]

    public init(commands: [CommandSpec]) {
        self.commands = commands
    }

    /// The modules that have commands, sorted.
    public var modules: [String] { Array(Set(commands.map(\.module))).sorted() }

    public func commands(of module: String) -> [CommandSpec] {
        commands.filter { $0.module == module }
    }

    /// A routed command: which one, and the request it becomes.
    public struct Route: Sendable {
        public let command: CommandSpec
        public let request: Emitted
    }

    public func route(_ text: String) throws(CommandError) -> Route {
        guard let components = URLComponents(string: text), let scheme = components.scheme else {
            throw .malformedURL(text)
        }
        guard scheme.lowercased() == "bureau" else { throw .wrongScheme(scheme) }
        guard let module = components.host, !module.isEmpty else { throw .malformedURL(text) }
        let path = components.path.split(separator: "/").map(String.init)
        guard path.count == 1 else {
            if path.isEmpty {
                throw .unknownCommand(module: module, command: "", known: commands(of: module).map(\.name))
            }
            throw .malformedURL(text)
        }
        guard modules.contains(module) else { throw .unknownModule(module, known: modules) }
        let name = path[0]
        guard let command = commands.first(where: { $0.module == module && $0.name == name }) else {
            throw .unknownCommand(module: module, command: name, known: commands(of: module).map(\.name))
        }
        let label = "\(module)/\(name)"
        var values: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard let parameter = command.parameters.first(where: { $0.name == item.name }) else {
                throw .unknownParameter(command: label, parameter: item.name, known: command.parameters.map(\.name))
            }
            guard values[item.name] == nil else { throw .duplicateParameter(command: label, parameter: item.name) }
            let value = item.value ?? ""
            switch parameter.kind.check(value) {
            case .valid(let normalised): values[item.name] = normalised
            case .invalid(let expected):
                throw .malformedValue(command: label, parameter: item.name, value: value, expected: expected)
            }
        }
        for parameter in command.parameters where parameter.isRequired && values[parameter.name] == nil {
            throw .missingParameter(command: label, parameter: parameter.name)
        }
        return Route(command: command, request: try command.build(CommandArguments(values: values)))
    }

    /// Completions for a partly typed URL: module names, then command names, then parameters.
    public func completions(for prefix: String) -> [String] {
        let start = "bureau://"
        guard prefix.count <= start.count || prefix.hasPrefix(start) else { return [] }
        if prefix.count <= start.count {
            return start.hasPrefix(prefix) ? modules.map { start + $0 + "/" } : []
        }
        let rest = prefix.dropFirst(start.count)
        guard let slash = rest.firstIndex(of: "/") else {
            return modules.filter { $0.hasPrefix(rest) }.map { start + $0 + "/" }
        }
        let module = String(rest[..<slash])
        let afterSlash = rest[rest.index(after: slash)...]
        guard let question = afterSlash.firstIndex(of: "?") else {
            return commands(of: module).filter { $0.name.hasPrefix(afterSlash) }.map { command in
                start + module + "/" + command.name + (command.parameters.isEmpty ? "" : "?")
            }
        }
        let name = String(afterSlash[..<question])
        guard let command = commands(of: module).first(where: { $0.name == name }) else { return [] }
        let query = afterSlash[afterSlash.index(after: question)...]
        let items = query.split(separator: "&", omittingEmptySubsequences: false)
        let current = items.last.map(String.init) ?? ""
        guard !current.contains("=") else { return [] }
        let given = Set(items.dropLast().compactMap { $0.split(separator: "=").first.map(String.init) })
        let head = prefix.dropLast(current.count)
        return command.parameters.filter { !given.contains($0.name) && $0.name.hasPrefix(current) }.map {
            head + $0.name + "="
        }
    }
}
