import Foundation

/// Why a command URL cannot become a request; nothing is published for it.
public enum CommandError: Error, Equatable, CustomStringConvertible {
    case malformedURL(String)
    case wrongScheme(String)
    case unknownModule(String, known: [String])
    case unknownCommand(module: String, command: String, known: [String])
    case missingParameter(command: String, parameter: String)
    case unknownParameter(command: String, parameter: String, known: [String])
    case duplicateParameter(command: String, parameter: String)
    case malformedValue(command: String, parameter: String, value: String, expected: String)
    case invalidCombination(command: String, reason: String)

    public var description: String {
        switch self {
        case .malformedURL(let url):
            "'\(url)' is not a command URL; expected bureau://<module>/<command>?<name>=<value>&…"
        case .wrongScheme(let scheme):
            "the scheme is '\(scheme)'; command URLs start with bureau://"
        case .unknownModule(let module, let known):
            "unknown module '\(module)'; modules with commands: \(known.joined(separator: ", "))"
        case .unknownCommand(let module, let command, let known):
            "module \(module) has no command '\(command)'; it has: \(known.joined(separator: ", "))"
        case .missingParameter(let command, let parameter):
            "\(command) needs the parameter '\(parameter)'"
        case .unknownParameter(let command, let parameter, let known):
            "\(command) has no parameter '\(parameter)'; it takes: \(known.joined(separator: ", "))"
        case .duplicateParameter(let command, let parameter):
            "\(command) got the parameter '\(parameter)' more than once"
        case .malformedValue(let command, let parameter, let value, let expected):
            "\(command): '\(value)' is not a valid \(parameter): \(expected)"
        case .invalidCombination(let command, let reason):
            "\(command): \(reason)"
        }
    }
}
