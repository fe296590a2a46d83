import Foundation
import Guards

/// Where and how a process exports its spans: read from OpenTelemetry's standard environment
/// variables by ``init(environment:serviceName:resource:)``, or set field by field.
public struct OTLPConfiguration: Sendable {
    /// The URL spans are POSTed to (`…/v1/traces`).
    public var endpoint: String
    /// Sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS`).
    public var headers: [(name: String, value: String)] = []
    /// How long spans wait before they are sent, unless a batch fills first (`OTEL_BSP_SCHEDULE_DELAY`).
    public var scheduleDelay: Duration = .seconds(5)
    /// How long one export may take (the lesser of `OTEL_EXPORTER_OTLP_TIMEOUT`, or its `TRACES`
    /// form, and `OTEL_BSP_EXPORT_TIMEOUT`).
    public var exportTimeout: Duration = .seconds(10)
    /// Spans held while waiting (besides those being sent); more are dropped, and counted
    /// (`OTEL_BSP_MAX_QUEUE_SIZE`).
    public var maxQueueSize = 2048
    /// The most spans one export carries (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`).
    public var maxExportBatchSize = 512
    public var sampler: TraceSampler = .parentBasedAlwaysOn
    /// The resource every span is of: `service.name` and the rest (`OTEL_RESOURCE_ATTRIBUTES`,
    /// under those the process sets).
    public var resource: [String: String]

    public init(endpoint: String, serviceName: String, resource: [String: String] = [:]) {
        self.endpoint = endpoint
        self.resource = resource.merging(["service.name": serviceName]) { _, name in name }
    }

    /// The configuration the environment gives, as OpenTelemetry's SDKs read it; nil when it names
    /// no collector (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), or
    /// turns traces off (`OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none`). Throws naming the
    /// variable whose value it cannot use. `serviceName` and `resource` win over the environment's.
    public init?(
        environment: [String: String], serviceName: String, resource: [String: String] = [:]
    ) throws(OTLPConfigurationError) {
        guard environment["OTEL_SDK_DISABLED"]?.lowercased() != "true" else { return nil }
        if let exporter = environment["OTEL_TRACES_EXPORTER"]?.lowercased(), !exporter.isEmpty {
            if exporter == "none" { return nil }
            guard exporter == "otlp" else {
                throw OTLPConfigurationError(
                    variable: "OTEL_TRACES_EXPORTER", value: exporter, expected: "otlp or none")
            }
        }
        let endpoint: String
        if let traces = environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"], !traces.isEmpty {
            endpoint = try Self.url(traces, variable: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        } else if let base = environment["OTEL_EXPORTER_OTLP_ENDPOINT"], !base.isEmpty {
            let checked = try Self.url(base, variable: "OTEL_EXPORTER_OTLP_ENDPOINT")
            endpoint = (checked.hasSuffix("/") ? String(checked.dropLast()) : checked) + "/v1/traces"
        } else {
            return nil
        }
        for variable in ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"] {
            if let value = environment[variable], !value.isEmpty {
                guard value == "http/protobuf" else {
                    throw OTLPConfigurationError(variable: variable, value: value, expected: "http/protobuf")
                }
                break
            }
        }
        var resource = resource
        resource["service.name"] = serviceName
        if let extra = environment["OTEL_RESOURCE_ATTRIBUTES"] {
            for (key, value) in try Self.pairs(extra, variable: "OTEL_RESOURCE_ATTRIBUTES") where resource[key] == nil {
                resource[key] = value
            }
        }
        self.init(endpoint: endpoint, serviceName: serviceName, resource: resource)
        for variable in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"] {
            if let text = environment[variable] {
                for (name, value) in try Self.pairs(text, variable: variable) {
                    headers.removeAll { $0.name.lowercased() == name.lowercased() }
                    headers.append((name, value))
                }
            }
        }
        func milliseconds(_ variable: String) throws(OTLPConfigurationError) -> Duration? {
            try Self.count(environment, variable).map { .milliseconds($0) }
        }
        if let delay = try milliseconds("OTEL_BSP_SCHEDULE_DELAY") { scheduleDelay = delay }
        var request = try milliseconds("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
        if request == nil { request = try milliseconds("OTEL_EXPORTER_OTLP_TIMEOUT") }
        let export = try milliseconds("OTEL_BSP_EXPORT_TIMEOUT")
        exportTimeout = min(request ?? exportTimeout, export ?? .seconds(30))
        if let size = try Self.count(environment, "OTEL_BSP_MAX_QUEUE_SIZE", atLeast: 1) { maxQueueSize = size }
        if let size = try Self.count(environment, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", atLeast: 1) {
            maxExportBatchSize = size
        }
        maxExportBatchSize = min(maxExportBatchSize, maxQueueSize)
        if let name = environment["OTEL_TRACES_SAMPLER"], !name.isEmpty {
            sampler = try Self.sampler(name.lowercased(), argument: environment["OTEL_TRACES_SAMPLER_ARG"])
        }
    }

    private static func url(_ value: String, variable: String) throws(OTLPConfigurationError) -> String {
        guard value.hasPrefix("http://") || value.hasPrefix("https://"), URL(string: value)?.host != nil else {
            throw OTLPConfigurationError(variable: variable, value: value, expected: "an http:// or https:// URL")
        }
        return value
    }

    /// A whole number of at least `atLeast`, at most a day's milliseconds; nil when unset.
    private static func count(
        _ environment: [String: String], _ variable: String, atLeast minimum: Int = 0
    ) throws(OTLPConfigurationError) -> Int? {
        guard let text = environment[variable], !text.isEmpty else { return nil }
        do {
            return try BoundedNumber.integer(text.trimmingCharacters(in: .whitespaces), in: minimum...86_400_000)
        } catch {
            throw OTLPConfigurationError(variable: variable, value: text, expected: error.expected)
        }
    }

    /// `key=value` pairs separated by commas, values percent-decoded (W3C Baggage's form, which
    /// OpenTelemetry's header and resource variables use).
    private static func pairs(_ text: String, variable: String) throws(OTLPConfigurationError) -> [(String, String)] {
        var pairs: [(String, String)] = []
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1)
            let key = parts.first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard parts.count == 2, !key.isEmpty,
                let value = parts[1].trimmingCharacters(in: .whitespaces).removingPercentEncoding,
                // A line break would end a header early and start another. (By scalars: "\r\n"
                // is one Character, equal to neither.)
                !(key + value).unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" })
            else {
                throw OTLPConfigurationError(
                    variable: variable, value: text, expected: "key=value pairs separated by commas")
            }
            pairs.append((key, value))
        }
        return pairs
    }

    private static func sampler(_ name: String, argument: String?) throws(OTLPConfigurationError) -> TraceSampler {
        func ratio() throws(OTLPConfigurationError) -> Double {
            guard let argument, !argument.isEmpty else { return 1 }
            do {
                return try BoundedNumber.decimal(argument.trimmingCharacters(in: .whitespaces), in: 0...1)
            } catch {
                throw OTLPConfigurationError(
                    variable: "OTEL_TRACES_SAMPLER_ARG", value: argument, expected: "a ratio from 0 to 1")
            }
        }
        switch name {
        case "always_on": return TraceSampler(root: .always, followsParent: false)
        case "always_off": return TraceSampler(root: .never, followsParent: false)
        case "traceidratio": return TraceSampler(root: .ratio(try ratio()), followsParent: false)
        case "parentbased_always_on": return TraceSampler(root: .always, followsParent: true)
        case "parentbased_always_off": return TraceSampler(root: .never, followsParent: true)
        case "parentbased_traceidratio": return TraceSampler(root: .ratio(try ratio()), followsParent: true)
        default:
            throw OTLPConfigurationError(
                variable: "OTEL_TRACES_SAMPLER", value: name,
                expected: "always_on, always_off, traceidratio or their parentbased_ forms")
        }
    }
}

/// An environment variable whose value the exporter cannot use.
public struct OTLPConfigurationError: Error, Equatable, CustomStringConvertible {
    public var variable: String
    public var value: String
    public var expected: String

    public init(variable: String, value: String, expected: String) {
        self.variable = variable
        self.value = value
        self.expected = expected
    }

    public var description: String { "\(variable)='\(value)': expected \(expected)" }
}
