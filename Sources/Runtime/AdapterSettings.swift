import Foundation
import Guards

/// An adapter's settings (`bureau run … --set NAME=VALUE`), read with bounds: every number
/// through ``BoundedNumber``, every URL checked for scheme, host and length. Errors name the
/// setting and the value.
public struct AdapterSettings: Sendable {
    /// A setting that cannot be used: its name, its value and why.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// The longest URL accepted: a URL is copied into events (the rates' source) and errors.
    public static let maximumURLLength = 2048

    let values: [String: String]

    public init(_ values: [String: String]) {
        self.values = values
    }

    /// The setting as given, if it is.
    public func text(_ name: String) -> String? { values[name] }

    /// An http or https URL with a host, at most ``maximumURLLength`` bytes; `fallback` when not given.
    public func url(_ name: String, default fallback: String) throws(Problem) -> String {
        let text = values[name] ?? fallback
        guard text.utf8.count <= Self.maximumURLLength else {
            throw Problem("\(name) is \(text.utf8.count) bytes long; the limit is \(Self.maximumURLLength)")
        }
        guard let parsed = URL(string: text), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil
        else {
            throw Problem("\(name) '\(text)' is not an http(s) URL")
        }
        return text
    }

    /// A number of milliseconds within `range`, if the setting is given.
    public func milliseconds(_ name: String, in range: ClosedRange<Int>) throws(Problem) -> Duration? {
        guard let text = values[name] else { return nil }
        do {
            return try BoundedNumber.milliseconds(text, in: range)
        } catch {
            throw Problem("\(name): \(error)")
        }
    }

    /// A whole number within `range`, if the setting is given.
    public func count(_ name: String, in range: ClosedRange<Int>) throws(Problem) -> Int? {
        guard let text = values[name] else { return nil }
        do {
            return try BoundedNumber.integer(text, in: range)
        } catch {
            throw Problem("\(name): \(error)")
        }
    }
}
