import BureauSchemas
import Bus
import BusTesting
import ConverterFeature
import EventLog
import Foundation
import Guards
import InMemoryStores
import Money
import RatesAdapter
import RatesServer
import Runtime
import ServiceLifecycle
import SwiftProtobuf
import TestServers
import TestSupport
import Testing

/// Cross rates as the converter shows them, against values computed here from the ECB's CSV.
///
/// Each sampled day travels the whole way: the rates server serves it in the ECB's XML, the
/// adapter fetches and publishes it, and the converter projection folds what reached the log.
/// The expected values come from the CSV in `../shared/data`, read and divided here with
/// NSDecimalNumber, rounded half to even to the quote currency's minor units.
@Suite(.timeLimit(.minutes(3)))
struct CrossRateTests {
    /// The ECB's history as published (`../shared/data`, else the shipped copy): date → currency
    /// → rate text, "N/A" left out.
    static func csv() throws -> [String: [String: String]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let path = root.deletingLastPathComponent().appendingPathComponent("shared/data/eurofxref-hist.csv").path
        let text: String
        if FileManager.default.fileExists(atPath: path) {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } else {
            // Without ../shared beside the repository: the same CSV as shipped, unpacked by gzip.
            let shipped = root.appendingPathComponent("Sources/Adapters/RatesServer/Resources/eurofxref-hist.csv.gz")
                .path
            text = try SystemCommand.run(["/bin/gzip", "-dc", shipped])
        }
        var lines = text.split(whereSeparator: \.isNewline).map(String.init)
        let header = lines.removeFirst().split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        var rows: [String: [String: String]] = [:]
        for line in lines {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            var rates: [String: String] = [:]
            for (currency, cell) in zip(header.dropFirst(), cells.dropFirst()) where !currency.isEmpty && cell != "N/A"
            {
                rates[currency] = cell
            }
            rows[cells[0]] = rates
        }
        return rows
    }

    /// ISO 4217 minor units of the currencies sampled.
    static let minorUnits = ["JPY": 0, "KRW": 0, "ISK": 0]

    static let pairs = [
        ("USD", "JPY"), ("GBP", "CHF"), ("JPY", "EUR"), ("EUR", "USD"), ("CHF", "GBP"), ("AUD", "CAD"),
        ("SEK", "NOK"), ("CZK", "PLN"), ("ZAR", "SGD"), ("EUR", "JPY"), ("KRW", "USD"), ("USD", "ISK"),
    ]

    static func expected(amount: String, base: String, quote: String, rates: [String: String]) -> String? {
        let locale = Locale(identifier: "en_US_POSIX")
        let rate: (String) -> NSDecimalNumber? = { code in
            code == "EUR" ? NSDecimalNumber(value: 1) : rates[code].map { NSDecimalNumber(string: $0, locale: locale) }
        }
        guard let from = rate(base), let to = rate(quote) else { return nil }
        let scale = Int16(minorUnits[quote] ?? 2)
        let rounding = NSDecimalNumberHandler(
            roundingMode: .bankers, scale: scale, raiseOnExactness: false, raiseOnOverflow: true,
            raiseOnUnderflow: true,
            raiseOnDivideByZero: true)
        let value = NSDecimalNumber(string: amount, locale: locale).multiplying(by: to.dividing(by: from))
        let rounded = value.rounding(accordingToBehavior: rounding)
        let formatter = NumberFormatter()
        formatter.locale = locale
        formatter.minimumFractionDigits = Int(scale)
        formatter.maximumFractionDigits = Int(scale)
        formatter.minimumIntegerDigits = 1
        formatter.usesGroupingSeparator = false
        return formatter.string(from: rounded)
    }

    /// Serves `date` over HTTP, runs the adapter until it publishes that day, and returns the event.
    static func published(
        on date: String, through deployment: TestDeployment, history: ECBHistory
    ) async throws -> StoredEvent? {
        let server = try await InProcessServer { onListening in
            var configuration = RatesServer.Configuration()
            configuration.port = 0
            configuration.daysPerSecond = 0
            configuration.start = date
            return try RatesServer(configuration: configuration, history: history).application(
                logger: TestLogging.logger("rates-server"), onListening: onListening)
        }
        let client = try deployment.connect("rates-adapter")
        var configuration = RatesAdapterService.Configuration()
        configuration.interval = .milliseconds(50)
        let adapter = RatesAdapterService(
            source: HTTPRatesSource(url: "http://127.0.0.1:\(server.port)\(RatesServer.dailyPath)"), client: client,
            snapshots: InMemorySnapshotStore(), configuration: configuration, logger: TestLogging.logger("rates"))
        let group = ServiceGroup(services: [adapter], logger: TestLogging.logger("group"))
        let task = Task { try await group.run() }
        let observer = try deployment.connect("observer")
        let events = try await observer.collect(.types([Bureau_Rates_RatesPublished.protoMessageName]), count: 1) {
            (try? $0.payload(as: Bureau_Rates_RatesPublished.self))??.asOf == date
        }
        await group.triggerGracefulShutdown()
        try await task.value
        await server.stop()
        observer.close()
        client.close()
        return events.first
    }

    static func event(_ message: some SwiftProtobuf.Message, position: UInt64) throws -> StoredEvent {
        StoredEvent(
            position: position, id: .random(), type: type(of: message).protoMessageName, commitTime: .zero,
            payload: try message.serializedData())
    }

    @Test func theConverterShowsCrossRatesComputedIndependentlyFromTheCSV() async throws {
        // Read (and, without ../shared, unpacked by gzip, waited for) on a thread of its own.
        let rows = try await OwnThread.run(name: "test-csv") { try Self.csv() }
        let history = try await RatesAdapterServiceTests.bundledHistory()
        let dates = rows.keys.sorted()
        #expect(dates.count > 7000)
        // Ten days spread over the whole history, oldest to newest.
        let sample = (0..<10).map { dates[$0 * (dates.count - 1) / 9] }
        try await RatesAdapterServiceTests.onBus { deployment in
            let projection = ConverterProjection()
            var compared = 0
            for (index, date) in sample.enumerated() {
                let rates = try #require(rows[date])
                let published = try #require(try await Self.published(on: date, through: deployment, history: history))
                for offset in 0..<3 {
                    let (base, quote) = Self.pairs[(index * 3 + offset) % Self.pairs.count]
                    let amount = Self.minorUnits[base] == 0 ? "123457" : "1234.57"
                    guard let expected = Self.expected(amount: amount, base: base, quote: quote, rates: rates) else {
                        continue  // a currency the ECB did not fix that day
                    }
                    var value = projection.initialValue
                    var pair = Bureau_Watchlist_PairAdded()
                    pair.base = base
                    pair.quote = quote
                    try projection.apply(try Self.event(pair, position: 1), to: &value)
                    try projection.apply(
                        try Self.event(AmountChanged(value: amount, currency: base), position: 2), to: &value)
                    try projection.apply(published, to: &value)
                    let shown = value.conversions.first
                    #expect(shown?.converted == expected, "\(amount) \(base)→\(quote) on \(date)")
                    #expect(shown?.currency == quote)
                    compared += 1
                }
            }
            #expect(compared >= 20)
        }
    }
}
