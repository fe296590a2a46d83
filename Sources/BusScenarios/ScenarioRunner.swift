import BureauSchemas
import Bus
import Runtime
import SwiftProtobuf

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs scenario files against a deployment through a ``BusFixture``.
///
/// A file's scenarios run in order and share the deployment, and the variables captured by
/// `capture:` (`${name}` in a later URL or field). A failed background fails every scenario
/// of its file; a failed scenario does not stop the ones after it.
public struct ScenarioRunner: Sendable {
    public let fixture: BusFixture

    public init(fixture: BusFixture) {
        self.fixture = fixture
    }

    /// Runs every scenario of `suite`, handing each result to `report` as it finishes.
    public func run(_ suite: ScenarioSuite, report: (ScenarioResult) -> Void = { _ in }) async -> [ScenarioResult] {
        var variables: [String: String] = [:]
        var results: [ScenarioResult] = []
        var background: String?
        do {
            for step in suite.given { try await given(step, variables: variables) }
        } catch {
            background = "the file's given steps failed: \(Self.describe(error))"
        }
        for scenario in suite.scenarios {
            let start = ContinuousClock.now
            var failure = background
            if failure == nil {
                do {
                    try await run(scenario, variables: &variables)
                } catch {
                    failure = Self.describe(error)
                }
            }
            let result = ScenarioResult(
                file: suite.file, name: scenario.name, line: scenario.line, duration: .now - start, failure: failure)
            report(result)
            results.append(result)
        }
        return results
    }

    private func run(_ scenario: Scenario, variables: inout [String: String]) async throws {
        for step in scenario.given { try await given(step, variables: variables) }
        let stimulus = try await publish(scenario.when, variables: variables)
        // A field may name a value captured by another event of the same expectation
        // (`${booked}` in the confirmation of the reservation it books): it matches anything
        // while events are matched, and is checked once every capture is known.
        let capturedHere = Set(scenario.expect.flatMap { $0.captures.map(\.variable) })
        var patterns: [EventPattern] = []
        var deferred: [(expected: Int, path: String, template: String)] = []
        for (index, expected) in scenario.expect.enumerated() {
            let (fields, later) = try Self.substitute(
                expected.fields, variables, deferring: capturedHere, line: expected.line)
            patterns.append(EventPattern(type: expected.type, fields: fields))
            deferred += later.map { (index, $0.path, $0.template) }
        }
        let matched = try await fixture.expect(
            stimulus, patterns, exhaustivity: scenario.exhaustive ? .exhaustive : .nonExhaustive,
            timeout: scenario.timeout)
        let payloads = matched.map { EventJSON.payload(type: $0.type, bytes: $0.payload) }
        for (index, expected) in scenario.expect.enumerated() {
            for (variable, path) in expected.captures {
                guard let value = payloads[index].value(at: path), let text = value.scalarText else {
                    throw ScenarioFailure(
                        "line \(expected.line): cannot capture \(variable): the \(expected.type) at position "
                            + "\(matched[index].position) has no value at '\(path)' (payload: \(payloads[index]))")
                }
                variables[variable] = text
            }
        }
        for (index, path, template) in deferred {
            let expected = try Self.substitute(template, variables, line: scenario.expect[index].line)
            let actual = payloads[index].value(at: path)?.scalarText
            guard actual == expected else {
                throw ScenarioFailure(
                    "line \(scenario.expect[index].line): \(scenario.expect[index].type) at position "
                        + "\(matched[index].position): \(path): expected \(template) = \"\(expected)\", got "
                        + (actual.map { "\"\($0)\"" } ?? "(absent)"))
            }
        }
    }

    /// `substitute`, except that strings naming a variable in `deferring` become `*` and are
    /// returned, with their paths, to check later.
    static func substitute(
        _ value: JSONValue, _ variables: [String: String], deferring: Set<String>, line: Int, at path: String = ""
    ) throws -> (JSONValue, [(path: String, template: String)]) {
        switch value {
        case .string(let text):
            if deferring.contains(where: { text.contains("${\($0)}") }) { return (.string("*"), [(path, text)]) }
            return (.string(try substitute(text, variables, line: line)), [])
        case .array(let items):
            var result: [JSONValue] = []
            var later: [(path: String, template: String)] = []
            for (index, item) in items.enumerated() {
                let (value, more) = try substitute(
                    item, variables, deferring: deferring, line: line,
                    at: path.isEmpty ? "\(index)" : "\(path).\(index)")
                result.append(value)
                later += more
            }
            return (.array(result), later)
        case .object(let members):
            var result: [(String, JSONValue)] = []
            var later: [(path: String, template: String)] = []
            for (key, member) in members {
                let (value, more) = try substitute(
                    member, variables, deferring: deferring, line: line, at: path.isEmpty ? key : "\(path).\(key)")
                result.append((key, value))
                later += more
            }
            return (.object(result), later)
        default:
            return (value, [])
        }
    }

    private func given(_ step: ScenarioStep, variables: [String: String]) async throws {
        guard case .command(let template, let line) = step else {
            _ = try await publish(step, variables: variables)
            return
        }
        let url = try Self.substitute(template, variables, line: line)
        let answer = try await fixture.given(command: url)
        if try AnswerClassifier(fixture.router.route(url).command).verdict(type: answer.type) == .rejected {
            throw ScenarioFailure(
                "line \(line): the given command \(url) was rejected: "
                    + "\(EventJSON.payload(type: answer.type, bytes: answer.payload))")
        }
    }

    private func publish(_ step: ScenarioStep, variables: [String: String]) async throws -> Stimulus {
        switch step {
        case .command(let template, let line):
            return try await fixture.when(command: try Self.substitute(template, variables, line: line))
        case .event(let type, let template, let line):
            let payload = try Self.substitute(template, variables, line: line)
            guard let messageType = SchemaRegistry.messageType(named: type) else {
                throw ScenarioFailure("line \(line): unknown event type \(type)")
            }
            let message: any SwiftProtobuf.Message
            do {
                message = try messageType.init(jsonString: payload.description)
            } catch JSONDecodingError.unknownField(let name) {
                throw ScenarioFailure("line \(line): the payload is not a valid \(type): it has no field '\(name)'")
            } catch {
                throw ScenarioFailure("line \(line): the payload is not a valid \(type): \(error)")
            }
            return try await fixture.publish(type: type, payload: try message.serializedData(), label: type)
        }
    }

    /// `${name}` replaced by the captured value, in every string of a document.
    static func substitute(_ value: JSONValue, _ variables: [String: String], line: Int) throws -> JSONValue {
        try substitute(value, variables, deferring: [], line: line).0
    }

    static func substitute(_ text: String, _ variables: [String: String], line: Int) throws -> String {
        var result = ""
        var rest = text[...]
        while let open = rest.range(of: "${") {
            result += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else {
                throw ScenarioFailure("line \(line): '${' without a closing '}' in \(text)")
            }
            let name = String(rest[open.upperBound..<close])
            guard let value = variables[name] else {
                let known = variables.keys.sorted()
                throw ScenarioFailure(
                    "line \(line): no variable '\(name)' has been captured"
                        + (known.isEmpty ? "" : "; captured so far: \(known.joined(separator: ", "))"))
            }
            result += value
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    static func describe(_ error: any Error) -> String {
        String(describing: error)
    }
}

extension JSONValue {
    /// The value at a dotted path (`reservationId`, `rates.0.rate`, or `rates[0].rate` as
    /// failure reports write it); nil where there is none.
    func value(at path: String) -> JSONValue? {
        var current: JSONValue? = self
        let keys = path.replacingOccurrences(of: "[", with: ".").replacingOccurrences(of: "]", with: "")
        for key in keys.split(separator: ".") {
            switch current {
            case .object: current = current?[String(key)]
            case .array(let items):
                guard let index = Int(key), items.indices.contains(index) else { return nil }
                current = items[index]
            default: return nil
            }
        }
        return current
    }
}
