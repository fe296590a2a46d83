import OTLPTracing
import Testing

struct OTLPConfigurationTests {
    static func read(_ environment: [String: String]) throws -> OTLPConfiguration? {
        try OTLPConfiguration(environment: environment, serviceName: "bus", resource: ["bureau.process": "bus"])
    }

    @Test func noCollectorOrTracesTurnedOffIsNoConfiguration() throws {
        #expect(try Self.read([:]) == nil)
        #expect(try Self.read(["OTEL_EXPORTER_OTLP_ENDPOINT": ""]) == nil)
        let endpoint = "http://127.0.0.1:4318"
        #expect(try Self.read(["OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SDK_DISABLED": "TRUE"]) == nil)
        #expect(try Self.read(["OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_EXPORTER": "none"]) == nil)
    }

    @Test func theBaseEndpointGetsTheTracesPathAndTheTracesEndpointIsTakenAsItIs() throws {
        #expect(try Self.read(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"])?.endpoint == "http://c:4318/v1/traces")
        #expect(
            try Self.read(["OTEL_EXPORTER_OTLP_ENDPOINT": "https://c/otel/"])?.endpoint == "https://c/otel/v1/traces")
        let both = [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:1/in",
        ]
        #expect(try Self.read(both)?.endpoint == "http://t:1/in")
    }

    @Test func theStandardVariablesAreRead() throws {
        let configuration = try #require(
            try Self.read([
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_BSP_SCHEDULE_DELAY": "50",
                "OTEL_EXPORTER_OTLP_TIMEOUT": "200", "OTEL_BSP_EXPORT_TIMEOUT": "500",
                "OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "512",
                "OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%20b, tenant = x",
                "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=test,service.name=other",
                "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25",
            ]))
        #expect(configuration.scheduleDelay == .milliseconds(50))
        #expect(configuration.exportTimeout == .milliseconds(200))
        #expect(configuration.maxQueueSize == 100)
        #expect(configuration.maxExportBatchSize == 100, "never more than the queue holds")
        #expect(configuration.headers.map(\.name) == ["api-key", "tenant"])
        #expect(configuration.headers.map(\.value) == ["a b", "x"])
        #expect(
            configuration.resource == [
                "service.name": "bus", "bureau.process": "bus", "deployment.environment": "test",
            ])
        #expect(configuration.sampler == TraceSampler(root: .ratio(0.25), followsParent: true))
    }

    @Test(arguments: [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318", "an http:// or https:// URL"),
        ("OTEL_BSP_SCHEDULE_DELAY", "soon", "a whole number from 0 to 86400000"),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "0", "a whole number from 1 to 86400000"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "http/protobuf"),
        ("OTEL_TRACES_SAMPLER", "sometimes", "always_on, always_off, traceidratio or their parentbased_ forms"),
        ("OTEL_TRACES_SAMPLER_ARG", "2", "a ratio from 0 to 1"),
        ("OTEL_TRACES_SAMPLER_ARG", "nan", "a ratio from 0 to 1"),
        ("OTEL_TRACES_SAMPLER_ARG", "0x1p-1", "a ratio from 0 to 1"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "novalue", "key=value pairs separated by commas"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "a=b%0D%0AHost: elsewhere", "key=value pairs separated by commas"),
        ("OTEL_TRACES_EXPORTER", "zipkin", "otlp or none"),
    ])
    func aValueThatCannotBeUsedIsAnErrorNamingItsVariable(variable: String, value: String, expected: String) {
        var environment = ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_SAMPLER": "traceidratio"]
        environment[variable] = value
        #expect(throws: OTLPConfigurationError(variable: variable, value: value, expected: expected)) {
            try Self.read(environment)
        }
    }
}
