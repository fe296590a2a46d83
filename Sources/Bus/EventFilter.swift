import BureauSchemas

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which events a subscription wants: every event, or those whose type starts with one of some prefixes.
///
/// A prefix is a type name ("bureau.rates.RatesPublished"), a package with its dot
/// ("bureau.watchlist."), or any start of a type name. The filter also decides how gaps are
/// detected (see ``chain``).
public struct EventFilter: Sendable, Equatable, CustomStringConvertible {
    public let prefixes: [String]
    /// The prefixes as bytes, for matching topic frames without making strings.
    private let prefixBytes: [[UInt8]]

    /// Every event.
    public static let all = EventFilter(prefixes: [])

    public init(prefixes: [String]) {
        self.prefixes = prefixes.contains("") ? [] : Array(Set(prefixes)).sorted()
        prefixBytes = self.prefixes.map { Array($0.utf8) }
    }

    public static func == (lhs: EventFilter, rhs: EventFilter) -> Bool { lhs.prefixes == rhs.prefixes }

    /// Whether a type name given as bytes (a topic frame) matches.
    package func matches(bytes type: UnsafeRawBufferPointer) -> Bool {
        prefixBytes.isEmpty || prefixBytes.contains { EventFilter.hasPrefix(type, $0) }
    }

    /// Whether an envelope's type matches, read from its bytes: false for one that has no type
    /// or does not scan. For the catch-up reads that filter the log: no string is made.
    package func matches(envelope: Data) -> Bool {
        guard !prefixBytes.isEmpty else { return true }
        return envelope.withUnsafeBytes { raw in
            guard let range = (try? EnvelopeScanner.scan(raw))?.typeRange else { return false }
            return matches(bytes: UnsafeRawBufferPointer(rebasing: raw[range]))
        }
    }

    package static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
        guard bytes.count >= prefix.count else { return false }
        return prefix.withUnsafeBytes { prefix in
            guard let left = bytes.baseAddress, let right = prefix.baseAddress else { return prefix.isEmpty }
            return memcmp(left, right, prefix.count) == 0
        }
    }

    /// Events whose type is one of these.
    public static func types(_ names: [String]) -> EventFilter { EventFilter(prefixes: names) }

    /// Whether `type` matches, compared byte by byte as the daemon compares topics, so that a
    /// fold and the daemon can never disagree on a name that Unicode would call equivalent.
    public func matches(_ type: String) -> Bool {
        guard !prefixBytes.isEmpty else { return true }
        // A native string's bytes, in place; a copy only for a bridged one.
        if let matched = type.utf8.withContiguousStorageIfAvailable({ matches(bytes: UnsafeRawBufferPointer($0)) }) {
            return matched
        }
        var type = type
        return type.withUTF8 { matches(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Which sequence of positions proves that nothing matching was missed.
    public enum Chain: Sendable, Equatable {
        /// Every event: positions must follow one another.
        case global
        /// Events of one package: each publication names the previous event of its package.
        case package(String)
    }

    /// The package chain if every prefix falls within one package, else the global chain.
    ///
    /// A prefix "bureau.watchlist." or "bureau.watchlist.PairAdded" falls within the package
    /// "bureau.watchlist"; a prefix such as "bureau.watch" could match several packages.
    public var chain: Chain {
        var packages = Set<String>()
        for prefix in prefixes {
            guard let package = EventFilter.package(within: prefix) else { return .global }
            packages.insert(package)
        }
        return packages.count == 1 ? .package(packages.first ?? "") : .global
    }

    /// The ZeroMQ subscription prefix that selects what the chain needs.
    package var subscriptionPrefix: String {
        switch chain {
        case .global: ""
        case .package(let package): package + "."
        }
    }

    /// The package every type starting with `prefix` belongs to, if there is exactly one.
    ///
    /// Packages are lower-case and messages start with a capital letter (protobuf style), so a
    /// prefix ending in "." names a package, and one whose last part starts with a capital
    /// letter is within the package before it.
    static func package(within prefix: String) -> String? {
        if prefix.hasSuffix(".") {
            let package = String(prefix.dropLast())
            return TypeName.problem(with: package + ".X") == nil ? package : nil
        }
        let last = TypeName.shortName(of: prefix)
        guard let first = last.first, first.isUppercase else { return nil }
        let package = String(TypeName.package(of: prefix))
        return package.isEmpty ? nil : package
    }

    public var description: String { prefixes.isEmpty ? "all events" : prefixes.joined(separator: ", ") }
}
