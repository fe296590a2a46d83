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
    /// Lines end in LF or CRLF (blank lines are skipped); spaces and tabs around a cell are not
    /// part of it.
    public init(csv: String) throws(LoadError) {
        var text = csv
        // Read as bytes: the history is some 7,000 rows of 40 cells, which Character by Character
        // and Foundation's trimming took seconds to parse in a debug build.
        self.fixings = try text.withUTF8 { Self.fixings(csv: $0) }.get()
    }

    private static func fixings(csv: UnsafeBufferPointer<UInt8>) -> Result<[Fixing], LoadError> {
        // Plain index loops over the bytes: the standard library's generic `split` over slices is
        // not specialized in a debug build, and took a second and a half of it.
        func text(_ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: csv[range]), as: UTF8.self)
        }
        func isNotAvailable(_ range: Range<Int>) -> Bool {
            range.count == 3 && csv[range.lowerBound] == UInt8(ascii: "N")
                && csv[range.lowerBound + 1] == UInt8(ascii: "/")
                && csv[range.lowerBound + 2] == UInt8(ascii: "A")
        }
        var columns: [String]?
        var fixings: [Fixing] = []
        var number = 0
        var cells: [Range<Int>] = []
        var lineStart = 0
        for index in 0...csv.count {
            guard index == csv.count || csv[index] == UInt8(ascii: "\n") || csv[index] == UInt8(ascii: "\r") else {
                continue
            }
            defer { lineStart = index + 1 }
            guard index > lineStart else { continue }  // a blank line, or the LF of a CRLF
            number += 1
            Self.cells(of: lineStart..<index, in: csv, into: &cells)
            guard let columns else {
                let header = cells.map(text)
                guard header.first == "Date" else {
                    return .failure(
                        LoadError(description: "the CSV's first column is '\(header.first ?? "")', expected 'Date'"))
                }
                columns = header
                continue
            }
            guard let date = cells.first, date.count == 10 else {
                return .failure(LoadError(description: "line \(number): no date"))
            }
            var rates: [(String, String)] = []
            for (index, cell) in cells.enumerated().dropFirst() where index < columns.count {
                guard !cell.isEmpty, !isNotAvailable(cell), !columns[index].isEmpty else { continue }
                rates.append((columns[index], text(cell)))
            }
            fixings.append(Fixing(date: text(date), rates: rates))
        }
        guard columns != nil else { return .failure(LoadError(description: "the CSV is empty")) }
        guard !fixings.isEmpty else { return .failure(LoadError(description: "the CSV has no rows")) }
        return .success(fixings.sorted { $0.date < $1.date })
    }

    /// The comma-separated cells of the bytes at `line`, each without the spaces and tabs around
    /// it, as ranges of `bytes`: into `cells`, which is emptied first.
    private static func cells(of line: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>, into cells: inout [Range<Int>])
    {
        func isBlank(_ index: Int) -> Bool { bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") }
        cells.removeAll(keepingCapacity: true)
        var start = line.lowerBound
        for index in line.lowerBound...line.upperBound
        where index == line.upperBound || bytes[index] == UInt8(ascii: ",") {
            var low = start
            var high = index
            while low < high, isBlank(low) { low += 1 }
            while high > low, isBlank(high - 1) { high -= 1 }
            cells.append(low..<high)
            start = index + 1
        }
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
