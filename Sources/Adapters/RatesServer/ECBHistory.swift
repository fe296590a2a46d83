import CZlib
import Foundation

/// The ECB's euro reference rates, one fixing per TARGET business day, oldest first.
///
/// Source: European Central Bank, euro foreign exchange reference rates
/// (https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/),
/// 1999-01-04 to 2026-10-30, shipped gzipped with the server; reuse is permitted with the
/// source named.
public struct ECBHistory: Sendable {
    public struct Fixing: Sendable, Equatable {
        /// "YYYY-MM-DD".
        public let date: String
        /// Currency code and the rate exactly as the ECB published it, in the ECB's column order.
        public let rates: [(currency: String, rate: String)]

        public static func == (lhs: Fixing, rhs: Fixing) -> Bool {
            lhs.date == rhs.date && lhs.rates.map(\.currency) == rhs.rates.map(\.currency)
                && lhs.rates.map(\.rate) == rhs.rates.map(\.rate)
        }
    }

    public let fixings: [Fixing]

    public struct LoadError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Parses the ECB's CSV: a header `Date,USD,JPY,…` and a row per day, `N/A` where there is no rate.
    public init(csv: String) throws(LoadError) {
        var lines = csv.split(whereSeparator: \.isNewline).makeIterator()
        guard let header = lines.next() else { throw LoadError(description: "the CSV is empty") }
        let columns = header.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard columns.first == "Date" else {
            throw LoadError(description: "the CSV's first column is '\(columns.first ?? "")', expected 'Date'")
        }
        var fixings: [Fixing] = []
        var number = 1
        for line in lines {
            number += 1
            let cells = line.split(separator: ",", omittingEmptySubsequences: false)
            guard let date = cells.first.map(String.init), date.count == 10 else {
                throw LoadError(description: "line \(number): no date")
            }
            var rates: [(String, String)] = []
            for (index, cell) in cells.enumerated().dropFirst() where index < columns.count {
                let value = cell.trimmingCharacters(in: .whitespaces)
                guard !value.isEmpty, value != "N/A", !columns[index].isEmpty else { continue }
                rates.append((columns[index], value))
            }
            fixings.append(Fixing(date: date, rates: rates))
        }
        self.fixings = fixings.sorted { $0.date < $1.date }
        guard !self.fixings.isEmpty else { throw LoadError(description: "the CSV has no rows") }
    }

    /// Reads a CSV file, gzipped or not.
    public init(path: String) throws(LoadError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LoadError(description: "cannot read \(path)")
        }
        let text: Data
        if data.starts(with: [0x1F, 0x8B]) {
            guard let inflated = Gzip.decompress(data) else {
                throw LoadError(description: "\(path) is not a valid gzip file")
            }
            text = inflated
        } else {
            text = data
        }
        try self.init(csv: String(decoding: text, as: UTF8.self))
    }

    /// The history shipped with Bureau.
    public static func bundled() throws(LoadError) -> ECBHistory {
        guard let url = Bundle.module.url(forResource: "eurofxref-hist.csv", withExtension: "gz") else {
            throw LoadError(description: "the bundled ECB history is missing; pass --csv")
        }
        return try ECBHistory(path: url.path)
    }

    /// The last fixing on or before `date`; nil if `date` is before the first.
    public func fixing(onOrBefore date: String) -> Fixing? {
        var low = 0
        var high = fixings.count
        while low < high {
            let middle = (low + high) / 2
            if fixings[middle].date <= date { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : fixings[low - 1]
    }

    /// Fixings from `start` through `end`, newest first.
    public func fixings(from start: String, through end: String) -> [Fixing] {
        fixings.filter { $0.date >= start && $0.date <= end }.reversed()
    }
}
