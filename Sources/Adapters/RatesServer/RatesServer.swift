import Foundation
import Hummingbird
import Logging
import Synchronization

/// The embedded rates source: ECB reference rates over HTTP on loopback, from the shipped
/// history, at the ECB's own paths and in its own XML formats.
///
///     GET /stats/eurofxref/eurofxref-daily.xml     the fixing of "today"
///     GET /stats/eurofxref/eurofxref-hist-90d.xml  the fixings of the 90 days to "today", newest first
///     GET /health                                  200 "ok"
///
/// "Today" advances through the history at a pace of days per second (see ``HistoryClock``).
public struct RatesServer: Sendable {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        /// 0 lets the system choose.
        public var port = 8561
        public var daysPerSecond = 0.2
        /// Nil: a year before the last fixing.
        public var start: String?
        /// Answer 500 to the first this many requests, as a source that is down at first: a
        /// simulated fault (`serve rates --fail-first`).
        public var failFirst = 0

        public init() {}
    }

    public static let dailyPath = "/stats/eurofxref/eurofxref-daily.xml"
    public static let ninetyDayPath = "/stats/eurofxref/eurofxref-hist-90d.xml"

    public let configuration: Configuration
    public let history: ECBHistory
    public let clock: HistoryClock
    private let failures: Failures

    final class Failures: Sendable {
        let remaining: Atomic<Int>
        init(_ count: Int) { remaining = Atomic(count) }
        /// Whether this request should fail, counting it.
        func take() -> Bool {
            while true {
                let current = remaining.load(ordering: .relaxed)
                guard current > 0 else { return false }
                if remaining.compareExchange(expected: current, desired: current - 1, ordering: .relaxed).exchanged {
                    return true
                }
            }
        }
    }

    public init(configuration: Configuration, history: ECBHistory) throws {
        self.configuration = configuration
        self.history = history
        let first = history.fixings.first?.date ?? "1999-01-04"
        let last = history.fixings.last?.date ?? first
        let start =
            configuration.start
            ?? HistoryClock.text(HistoryClock.date(last)?.addingTimeInterval(-365 * 86_400) ?? Date())
        clock = try HistoryClock(
            startDate: start, daysPerSecond: configuration.daysPerSecond, firstDate: first, lastDate: last)
        failures = Failures(configuration.failFirst)
    }

    /// The application, ready to run as a service; `onListening` gets the bound port.
    public func application(
        logger: Logger, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    )
        -> some ApplicationProtocol
    {
        let router = Router()
        let history = self.history
        let clock = self.clock
        let failures = self.failures
        router.get(RouterPath(RatesServer.dailyPath)) { _, _ -> Response in
            if failures.take() { return RatesServer.serverError() }
            guard let fixing = history.fixing(onOrBefore: clock.today) else {
                return Response(status: .notFound)
            }
            return RatesServer.xml(ECBDocument.render([fixing]))
        }
        router.get(RouterPath(RatesServer.ninetyDayPath)) { _, _ -> Response in
            if failures.take() { return RatesServer.serverError() }
            let today = clock.today
            let start = HistoryClock.text(
                (HistoryClock.date(today) ?? Date()).addingTimeInterval(-90 * 86_400))
            return RatesServer.xml(ECBDocument.render(history.fixings(from: start, through: today)))
        }
        router.get("/health") { _, _ in "ok" }
        return Application(
            router: router,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "bureau-rates"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    static func xml(_ text: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/xml; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func serverError() -> Response {
        Response(
            status: .internalServerError, headers: [.contentType: "text/plain"],
            body: .init(byteBuffer: ByteBuffer(string: "failing on purpose (--fail-first)\n")))
    }
}
