/// An ISO 4217 currency Bureau knows, with its minor units (decimals).
public struct Currency: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    /// The three-letter code, upper case, e.g. "EUR".
    public let code: String
    /// Digits after the decimal point in amounts of this currency: JPY 0, EUR 2, KWD 3.
    public let minorUnits: Int

    /// The currency with this code (case-insensitive), or nil if Bureau does not know it.
    public init?(_ code: String) {
        guard let (index, isUpperCase) = Currency.letterIndex(code) else { return nil }
        let units = Currency.unitsByLetterIndex[index]
        guard units >= 0 else { return nil }
        self.code = isUpperCase ? code : code.uppercased()
        minorUnits = Int(units)
    }

    public static let euro = Currency(code: "EUR", minorUnits: 2)

    /// `code` in upper case, as codes are compared. Codes nearly always come upper case (every
    /// event's do): those are returned as they are, since `uppercased()` cost more than the
    /// lookup itself in a host or a replay meeting a currency in every event.
    public static func upperCased(_ code: String) -> String {
        if let (_, isUpperCase) = letterIndex(code), isUpperCase { return code }
        return code.utf8.allSatisfy { $0 >= 0x41 && $0 <= 0x5A } ? code : code.uppercased()
    }

    /// For three ASCII letters of either case, their index among all such codes (AAA = 0,
    /// ZZZ = 26³ - 1) and whether they are all upper case; nil for anything else.
    static func letterIndex(_ code: String) -> (index: Int, isUpperCase: Bool)? {
        let utf8 = code.utf8
        guard utf8.count == 3 else { return nil }
        // The bytes in place (a code is a small string, kept in the value itself): iterating
        // the view checked the string's form at every byte, 7 % of a replay's fold.
        if let found = utf8.withContiguousStorageIfAvailable({ letterIndex($0[0], $0[1], $0[2]) }) { return found }
        var bytes = utf8.makeIterator()
        guard let first = bytes.next(), let second = bytes.next(), let third = bytes.next() else { return nil }
        return letterIndex(first, second, third)
    }

    private static func letterIndex(_ first: UInt8, _ second: UInt8, _ third: UInt8) -> (index: Int, isUpperCase: Bool)?
    {
        // ASCII letters differ from their capital in this bit only.
        let (a, b, c) = (first & ~0x20, second & ~0x20, third & ~0x20)
        guard (0x41...0x5A).contains(a), (0x41...0x5A).contains(b), (0x41...0x5A).contains(c) else { return nil }
        let isUpperCase = first == a && second == b && third == c
        return ((Int(a - 0x41) * 26 + Int(b - 0x41)) * 26 + Int(c - 0x41), isUpperCase)
    }

    /// `table` by ``letterIndex(_:)``, -1 for a code Bureau does not know: a host or a replay
    /// meets a currency in nearly every event, and indexing 17,576 bytes costs less than hashing.
    private static let unitsByLetterIndex: [Int8] = {
        var units = [Int8](repeating: -1, count: 26 * 26 * 26)
        for (code, minorUnits) in table {
            if let (index, _) = letterIndex(code) { units[index] = Int8(minorUnits) }
        }
        return units
    }()

    private init(code: String, minorUnits: Int) {
        self.code = code
        self.minorUnits = minorUnits
    }

    public var description: String { code }

    public static func < (lhs: Currency, rhs: Currency) -> Bool { lhs.code < rhs.code }

    public init(from decoder: any Decoder) throws {
        let code = try decoder.singleValueContainer().decode(String.self)
        guard let currency = Currency(code) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "unknown currency \(code)"))
        }
        self = currency
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(code)
    }

    /// Every currency Bureau knows, by code.
    public static var all: [Currency] { table.keys.sorted().compactMap(Currency.init) }

    /// ISO 4217 minor units: the currencies of the ECB's reference rates (including those the
    /// euro replaced) and other commonly traded ones.
    static let table: [String: Int] = [
        "AED": 2, "AUD": 2, "BGN": 2, "BHD": 3, "BRL": 2, "CAD": 2, "CHF": 2, "CLP": 0, "CNY": 2, "CYP": 2,
        "CZK": 2, "DKK": 2, "EEK": 2, "EGP": 2, "EUR": 2, "GBP": 2, "HKD": 2, "HRK": 2, "HUF": 2, "IDR": 2,
        "ILS": 2, "INR": 2, "ISK": 0, "JOD": 3, "JPY": 0, "KRW": 0, "KWD": 3, "LTL": 2, "LVL": 2, "MAD": 2,
        "MTL": 2, "MXN": 2, "MYR": 2, "NOK": 2, "NZD": 2, "OMR": 3, "PHP": 2, "PLN": 2, "ROL": 2, "RON": 2,
        "RUB": 2, "SAR": 2, "SEK": 2, "SGD": 2, "SIT": 2, "SKK": 2, "THB": 2, "TND": 3, "TRL": 2, "TRY": 2,
        "TWD": 2, "USD": 2, "VND": 0, "ZAR": 2,
    ]
}
