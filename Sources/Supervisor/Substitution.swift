import Foundation

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
