import Bus
import BusTesting
import EventLog
import FeatureTestSupport
import Foundation
import Guards
import Hummingbird
import OTLPTestSupport
import Synchronization
import TestSupport
import Testing
import ZeroMQBus

#if canImport(Glibc)
    import Glibc
#endif

/// Traces over OTLP from real processes, received by a collector in the test and decoded with
/// OpenTelemetry's protobuf definitions; and `bureau trace`, from the log alone.
@Suite(.timeLimit(.minutes(3)))
struct TracingTests {
    /// What every traced process is given: where to export, and batches sent within 50 ms.
    static func environment(_ endpoint: String) -> [String: String] {
        ["OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50"]
    }

    @Test func oneSendIsOneTraceWithTheRightParentsInEveryProcessItTouched() async throws {
        let receiver = await OTLPReceiver()
        let directory = try TemporaryDirectory("traces")
        let bus = BusProcess(directory: directory.path)
        try await bus.start(environment: Self.environment(receiver.endpoint))
        // Rates first, untraced: the watchlist adds only a pair it has a rate for.
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "test"))
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1172"])))
        client.close()
        let host = try ChildProcess(
            BureauExecutable.path, ["run", "watchlist", "--data", bus.location.dataDirectory],
            directory: directory.path, name: "run", environment: Self.environment(receiver.endpoint),
            readiness: true)
        try await host.waitUntilReady()

        // The flag rather than the environment: the same export.
        let sent = try await bus.run([
            "send", "bureau://watchlist/add?base=EUR&quote=USD", "--json", "--otlp-endpoint", receiver.endpoint,
        ])
        #expect(sent.code == 0, "\(sent.err)")
        let answer = try #require(
            try JSONSerialization.jsonObject(with: Data(sent.out.utf8)) as? [String: Any], "\(sent.out)")
        let correlation = try #require((answer["correlation"] as? String).flatMap(EventID.init))
        let traceID = TraceParent(traceID: correlation, spanID: 1).traceHex

        // The processes the log says the action touched, and the bus that committed each hop.
        let chain = try await bus.run(["trace", "\(correlation)"])
        #expect(chain.code == 0, "\(chain.err)")
        let lines = chain.out.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("trace \(correlation) (trace id \(traceID)): 2 events, 2 processes") == true)
        #expect(lines.dropFirst().first?.hasPrefix("#2 bureau.watchlist.PairAddRequested  send  +0 µs") == true)
        #expect(lines.dropFirst(2).first?.hasPrefix("└─ #3 bureau.watchlist.PairAdded  watchlist/watchlist  +") == true)

        let expectedNames: Set<String> = [
            "send watchlist/add", "commit bureau.watchlist.PairAddRequested",
            "reduce bureau.watchlist.PairAddRequested", "commit bureau.watchlist.PairAdded",
            "receive bureau.watchlist.PairAdded",
        ]
        let spans = await receiver.spans(within: .seconds(60)) { spans in
            Set(spans.filter { $0.traceID == traceID }.map(\.name)).isSuperset(of: expectedNames)
        }
        let trace = spans.filter { $0.traceID == traceID }
        #expect(Set(trace.map(\.name)) == expectedNames, "\(trace)")
        #expect(trace.count == expectedNames.count, "one span per hop: \(trace)")
        #expect(Set(trace.map(\.service)) == ["send", "bus", "watchlist"], "every process it touched")
        #expect(spans.allSatisfy { $0.traceID == traceID }, "nothing else was traced: \(spans)")
        #expect(receiver.refused.isEmpty)

        func span(_ name: String) throws -> ReceivedSpan { try #require(trace.first { $0.name == name }) }
        let root = try span("send watchlist/add")
        let step = try span("reduce bureau.watchlist.PairAddRequested")
        #expect(root.parentSpanID.isEmpty && root.service == "send")
        #expect(trace.filter(\.parentSpanID.isEmpty) == [root], "one root")
        #expect(trace.allSatisfy { $0.parentSpanID.isEmpty || trace.map(\.spanID).contains($0.parentSpanID) })
        #expect(try span("commit bureau.watchlist.PairAddRequested").parentSpanID == root.spanID)
        #expect(try span("commit bureau.watchlist.PairAddRequested").service == "bus")
        #expect(step.parentSpanID == root.spanID && step.service == "watchlist")
        #expect(try span("commit bureau.watchlist.PairAdded").parentSpanID == step.spanID)
        #expect(try span("receive bureau.watchlist.PairAdded").parentSpanID == step.spanID)
        #expect(try span("receive bureau.watchlist.PairAdded").service == "send")
        // The step begins within the action. Its end is not bounded by the action's: the step
        // ends once its outputs are handed to the outbox, whose publisher may send them, and the
        // answer reach the sender and end the action, before the step's own task runs on.
        #expect(root.startNanos <= step.startNanos && step.startNanos <= root.endNanos, "the action spans its hops")
        #expect(trace.allSatisfy { $0.resource["service.namespace"] == "bureau" })
        #expect(trace.allSatisfy { $0.resource["bureau.process"] == $0.service })

        // No payload, key, password or store URL: not the pair, not the data directory.
        for span in trace {
            for (key, value) in span.attributes.merging(span.resource, uniquingKeysWith: { a, _ in a }) {
                #expect(!value.contains("EUR") && !value.contains("USD"), "\(span.name): \(key)=\(value)")
                #expect(!value.contains(directory.path), "\(span.name): \(key)=\(value)")
            }
        }

        host.signal(SIGTERM)
        #expect(await host.exitCode() == 0)
        #expect(await bus.stop() == 0)
        await receiver.stop()
    }

    /// A reservation from `bureau send` is one trace through the reservations host and the
    /// booking adapter: the adapter's span is a child of the reducer step that accepted it, its
    /// HTTP call a child of that, and the call carries the call's span in its `traceparent`
    /// header (W3C trace context over HTTP); the outcome it publishes is the adapter span's child.
    @Test func aReservationsTraceGoesThroughTheBookingAdaptersHTTPCallWithItsTraceparent() async throws {
        let receiver = await OTLPReceiver()
        let directory = try TemporaryDirectory("traces-booking")
        let bus = BusProcess(directory: directory.path)
        try await bus.start(environment: Self.environment(receiver.endpoint))
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "test"))
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1172"])))
        client.close()
        // A booking service of the test's own, keeping the traceparent header of each booking.
        let headers = Mutex<[String?]>([])
        let service = try await InProcessServer { onListening in
            let router = Router()
            router.post("/reservations") { request, _ -> Response in
                let traceparent = request.headers.first { $0.name.canonicalName == "traceparent" }?.value
                headers.withLock { $0.append(traceparent) }
                return Response(
                    status: .created, headers: [.contentType: "application/json"],
                    body: ResponseBody(
                        byteBuffer: ByteBuffer(string: #"{"confirmationCode":"T-1","status":"confirmed"}"#)))
            }
            return Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) })
        }
        var hosts: [ChildProcess] = []
        for (name, arguments) in [
            ("reservations", ["run", "reservations"]),
            ("booking", ["run", "booking-adapter", "--set", "booking-url=http://127.0.0.1:\(service.port)"]),
        ] {
            let host = try ChildProcess(
                BureauExecutable.path, arguments + ["--data", bus.location.dataDirectory], directory: directory.path,
                name: name, environment: Self.environment(receiver.endpoint), readiness: true)
            hosts.append(host)
            try await host.waitUntilReady()
        }
        defer { for host in hosts { host.signal(SIGKILL) } }

        let sent = try await bus.run([
            "send", "bureau://reservations/reserve?base=EUR&quote=USD&amount=500.00&rate=1.1172", "--json",
            "--otlp-endpoint", receiver.endpoint,
        ])
        #expect(sent.code == 0, "\(sent.out) \(sent.err)")
        let answer = try #require(
            try JSONSerialization.jsonObject(with: Data(sent.out.utf8)) as? [String: Any], "\(sent.out)")
        let correlation = try #require((answer["correlation"] as? String).flatMap(EventID.init))
        let traceID = TraceParent(traceID: correlation, spanID: 1).traceHex

        let wanted: Set<String> = [
            "reduce bureau.reservations.ReservationRequested", "book reservation", "POST",
            "commit bureau.booking.ReservationConfirmed",
        ]
        let spans = await receiver.spans(within: .seconds(60)) { spans in
            Set(spans.filter { $0.traceID == traceID }.map(\.name)).isSuperset(of: wanted)
        }
        let trace = spans.filter { $0.traceID == traceID }
        func span(_ name: String) throws -> ReceivedSpan {
            try #require(trace.first { $0.name == name }, "\(name) in \(trace)")
        }
        let root = try span("send reservations/reserve")
        let step = try span("reduce bureau.reservations.ReservationRequested")
        let adapter = try span("book reservation")
        let call = try span("POST")
        #expect(root.parentSpanID.isEmpty && trace.filter(\.parentSpanID.isEmpty) == [root], "one root")
        #expect(step.parentSpanID == root.spanID && step.service == "reservations")
        #expect(adapter.parentSpanID == step.spanID, "the adapter continues the step that accepted it")
        #expect(adapter.service == "booking-adapter")
        #expect(call.parentSpanID == adapter.spanID && call.service == "booking-adapter")
        #expect(try span("commit bureau.booking.ReservationConfirmed").parentSpanID == adapter.spanID)
        #expect(try span("commit bureau.booking.ReservationConfirmed").service == "bus")
        #expect(trace.allSatisfy { $0.parentSpanID.isEmpty || trace.map(\.spanID).contains($0.parentSpanID) })
        // What the service received names the call's span, in the action's trace.
        #expect(headers.withLock { $0 } == ["00-\(traceID)-\(call.spanID)-01"])
        // No payload in any span: not the pair, not the amount.
        for span in trace {
            for (key, value) in span.attributes {
                #expect(!value.contains("EUR") && !value.contains("500.00"), "\(span.name): \(key)=\(value)")
            }
        }

        for host in hosts {
            host.signal(SIGTERM)
            #expect(await host.exitCode() == 0)
        }
        await service.stop()
        #expect(await bus.stop() == 0)
        await receiver.stop()
    }

    @Test func anUnreachableCollectorIsSaidOnceCountedAndTheBusGoesOn() async throws {
        let directory = try TemporaryDirectory("traces-unreachable")
        // A port nobody listens on: taken from the system, then closed.
        let port = try TCPPorts.freeTriple()
        var environment = Self.environment("http://127.0.0.1:\(port)")
        environment["OTEL_EXPORTER_OTLP_TIMEOUT"] = "200"
        environment["OTEL_BSP_EXPORT_TIMEOUT"] = "500"
        let bus = BusProcess(directory: directory.path)
        let daemon = try await bus.start(environment: environment)
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "test"))
        defer { client.close() }
        func traced(_ count: Int) -> [OutgoingEvent] {
            (0..<count).map { index in
                var event = OutgoingEvent(type: "bureau.test.Happened", payload: Data([UInt8(index)]))
                event.traceParent = UInt64(index + 1)
                return event
            }
        }
        #expect(try await client.publish(traced(10)).allSatisfy { $0.position != nil })
        // The first failed export is said (only in its log, so waited for there).
        try await daemon.waitForOutput("cannot export spans")
        // It goes on: more publishes, committed, their spans failing to export too.
        #expect(try await client.publish(traced(10)).allSatisfy { $0.position != nil })
        #expect(try await client.ping(timeout: .seconds(5)).head == 20)
        #expect(await bus.stop() == 0)

        let log = daemon.standardError
        let said = log.components(separatedBy: "cannot export spans").count - 1
        #expect(said == 1, "said once: \(log)")
        let summary = try #require(log.split(separator: "\n").first { $0.contains("traces: some exports failed") })
        let failed = try #require(
            summary.split(separator: " ").first { $0.hasPrefix("traces.failed_exports=") }
                .flatMap { Int($0.split(separator: "=")[1]) })
        #expect(failed >= 2, "counted: \(summary)")
    }

    @Test func traceFindsAChainByAnyOfItsIdsOfflineOnACopyAndRefusesWhatItCannotRead() async throws {
        let directory = try TemporaryDirectory("trace-command")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "shell"))
        let intent = EventID.random()
        let request = OutgoingEvent(id: intent, type: "bureau.test.Asked", payload: Data([1]))
        let unrelated = OutgoingEvent(type: "bureau.test.Other", payload: Data([2]))
        _ = try await client.publish([request, unrelated])
        let answerID = EventID.random()
        _ = try await client.publish([
            OutgoingEvent(
                id: answerID, type: "bureau.test.Answered", payload: Data([3]), module: "m", causation: 1,
                correlation: intent)
        ])
        client.close()
        #expect(await bus.stop() == 0)

        // Offline: the daemon is gone; by the correlation, by a later event's id, by the trace id.
        let byCorrelation = try await bus.run(["trace", "\(intent)"])
        #expect(byCorrelation.code == 0, "\(byCorrelation.err)")
        let tree = byCorrelation.out.split(separator: "\n").dropFirst().map(String.init)
        #expect(tree.count == 2, "\(byCorrelation.out)")
        #expect(tree.first?.hasPrefix("#1 bureau.test.Asked  shell  +0 µs") == true, "\(tree)")
        #expect(tree.last?.hasPrefix("└─ #3 bureau.test.Answered  shell/m  +") == true, "\(tree)")
        let byAnswer = try await bus.run(["trace", "\(answerID)"])
        #expect(byAnswer.code == 0)
        #expect(byAnswer.out.contains("#3 bureau.test.Answered  shell/m  +") && byAnswer.out.contains("◀"))
        #expect(byAnswer.out.contains("#1 bureau.test.Asked"))
        let byTraceID = try await bus.run(["trace", TraceParent(traceID: intent, spanID: 1).traceHex])
        #expect(byTraceID.out == byCorrelation.out)

        // A copy of the log, elsewhere.
        let copy = directory.file("copy")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: bus.location.logDirectory, toPath: copy + "/log")
        let onCopy = try await ChildProcess.bureau(
            ["trace", "\(intent)", "--data", copy], in: directory.path, name: "copy")
        #expect(onCopy.out == byCorrelation.out)

        // An id found nowhere, one that is no id, a log damaged past what was found.
        let unknown = try await bus.run(["trace", "\(EventID.random())"])
        #expect(unknown.code == 1)
        #expect(unknown.err.contains("has the id or the correlation"), "\(unknown.err)")
        #expect(unknown.err.contains("3 events read"), "\(unknown.err)")
        let malformed = try await bus.run(["trace", "not-an-id"])
        #expect(malformed.code == 64)
        #expect(malformed.err.contains("'not-an-id' is not an event id"), "\(malformed.err)")
        let segments = Files.list(bus.location.logDirectory).filter { $0.hasSuffix(".seg") }
        let newest = bus.location.logDirectory + "/" + (segments.last ?? "")
        try Files.overwrite(newest, at: Files.size(newest) - 20, with: [UInt8](repeating: 0xEE, count: 20))
        let damaged = try await bus.run(["trace", "\(intent)"])
        #expect(damaged.code == 1, "\(damaged.out)")
        #expect(damaged.err.contains("cannot read the whole log"), "\(damaged.err)")
    }
}

/// `bureau trace --store`: the same tree from a log kept in PostgreSQL.
@Suite(.requiresPostgreSQL, .timeLimit(.minutes(3)))
struct PostgresTraceTests {
    @Test func traceReadsAChainFromAStore() async throws {
        let directory = try TemporaryDirectory("pgtrace")
        // Creating the database runs psql and waits for it: on a thread of its own.
        let url = try await OwnThread.run(name: "test-postgres") { try TestPostgres.database() }
        let bus = BusProcess(directory: directory.path)
        try await bus.start(["--store", url])
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "shell"))
        let intent = EventID.random()
        _ = try await client.publish([
            OutgoingEvent(id: intent, type: "bureau.test.Asked", payload: Data([1])),
            OutgoingEvent(
                type: "bureau.test.Answered", payload: Data([2]), module: "m", causation: 1, correlation: intent),
        ])
        client.close()
        #expect(await bus.stop() == 0)

        let traced = try await ChildProcess.bureau(
            ["trace", "\(intent)", "--store", url, "--data", directory.file("elsewhere")], in: directory.path,
            name: "trace")
        #expect(traced.code == 0, "\(traced.err)")
        let lines = traced.out.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("trace \(intent) (trace id ") == true, "\(traced.out)")
        #expect(lines.count == 3)
        #expect(lines.dropFirst().first?.hasPrefix("#1 bureau.test.Asked  shell  +0 µs") == true)
        #expect(lines.last?.hasPrefix("└─ #2 bureau.test.Answered  shell/m  +") == true)
        let unknown = try await ChildProcess.bureau(
            ["trace", "\(EventID.random())", "--store", url, "--data", directory.file("elsewhere")],
            in: directory.path, name: "unknown")
        #expect(unknown.code == 1)
    }
}
