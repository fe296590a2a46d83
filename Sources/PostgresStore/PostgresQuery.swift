#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A statement and its parameters, written as one string: each interpolated value becomes a
/// parameter (`$1`, `$2`, …) sent apart from the SQL in PostgreSQL's binary format, never text
/// spliced into it.
///
///     "SELECT position FROM bureau_events WHERE id = ANY(\(ids))"
///
/// Text that is SQL itself (a database name made by the caller) goes in with ``init(unsafeSQL:)``.
public struct PostgresQuery: Sendable, ExpressibleByStringInterpolation {
    public private(set) var sql: String
    /// Each parameter's type and where its value lies in ``values``.
    var parameters: [(type: UInt32, range: Range<Int>)]
    /// Every parameter's value, one after the other (one buffer, one copy), after a first byte
    /// that is none's: an empty value still points at a byte (a NULL pointer would mean SQL NULL).
    var values: [UInt8]

    /// `sql` as it is, without parameters: the caller vouches for what it holds.
    public init(unsafeSQL sql: String) {
        self.sql = sql
        parameters = []
        values = [0]
    }

    public init(stringLiteral value: String) {
        self.init(unsafeSQL: value)
    }

    public init(stringInterpolation: StringInterpolation) {
        sql = stringInterpolation.sql
        parameters = stringInterpolation.parameters
        values = stringInterpolation.values
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var sql = ""
        var parameters: [(type: UInt32, range: Range<Int>)] = []
        var values: [UInt8] = [0]

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + 4 * interpolationCount)
            parameters.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        /// `value` as the next parameter.
        public mutating func appendInterpolation(_ value: some PostgresEncodable) {
            let start = values.count
            value.encode(into: &values)
            parameters.append((type(of: value).postgresType, start..<values.count))
            sql += "$\(parameters.count)"
        }
    }

    /// Calls `body` with the four arrays libpq's `PQsendQueryParams` takes (types, values,
    /// lengths, formats: binary), valid for the call.
    func withLibpqArrays<T>(
        _ body: (
            UnsafePointer<UInt32>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?
        ) -> T
    ) -> T {
        let types = parameters.map(\.type)
        let lengths = parameters.map { Int32(clamping: $0.range.count) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        return values.withUnsafeBytes { all in
            let pointers: [UnsafePointer<CChar>?] = parameters.map { parameter in
                all.baseAddress.map { ($0 + parameter.range.lowerBound).assumingMemoryBound(to: CChar.self) }
            }
            return pointers.withUnsafeBufferPointer { body(types, $0.baseAddress, lengths, formats) }
        }
    }
}

/// A Swift value PostgreSQL takes as a parameter in its binary format.
public protocol PostgresEncodable: Sendable {
    /// The OID of the PostgreSQL type the value is sent as.
    static var postgresType: UInt32 { get }
    /// The type's binary format.
    func encode(into bytes: inout [UInt8])
}

/// A value that may also go in an array parameter (`= ANY($1)`, `unnest($1, $2)`).
public protocol PostgresArrayElement: PostgresEncodable {
    /// The OID of the array type of `postgresType`.
    static var postgresArrayType: UInt32 { get }
}

extension FixedWidthInteger {
    fileprivate func appendBigEndian(to bytes: inout [UInt8]) {
        withUnsafeBytes(of: bigEndian) { bytes.append(contentsOf: $0) }
    }
}

extension Int64: PostgresArrayElement {
    public static var postgresType: UInt32 { 20 }  // int8
    public static var postgresArrayType: UInt32 { 1016 }
    public func encode(into bytes: inout [UInt8]) { appendBigEndian(to: &bytes) }
}

extension Int: PostgresArrayElement {
    public static var postgresType: UInt32 { 20 }  // int8
    public static var postgresArrayType: UInt32 { 1016 }
    public func encode(into bytes: inout [UInt8]) { Int64(self).appendBigEndian(to: &bytes) }
}

extension Int32: PostgresArrayElement {
    public static var postgresType: UInt32 { 23 }  // int4
    public static var postgresArrayType: UInt32 { 1007 }
    public func encode(into bytes: inout [UInt8]) { appendBigEndian(to: &bytes) }
}

extension String: PostgresArrayElement {
    public static var postgresType: UInt32 { 25 }  // text
    public static var postgresArrayType: UInt32 { 1009 }
    public func encode(into bytes: inout [UInt8]) { bytes.append(contentsOf: utf8) }
}

extension UUID: PostgresArrayElement {
    public static var postgresType: UInt32 { 2950 }  // uuid
    public static var postgresArrayType: UInt32 { 2951 }
    public func encode(into bytes: inout [UInt8]) { withUnsafeBytes(of: uuid) { bytes.append(contentsOf: $0) } }
}

extension Date: PostgresArrayElement {
    public static var postgresType: UInt32 { 1184 }  // timestamptz
    public static var postgresArrayType: UInt32 { 1185 }
    /// Microseconds since 2000-01-01 00:00 UTC, PostgreSQL's epoch.
    public func encode(into bytes: inout [UInt8]) {
        let micros = ((timeIntervalSince1970 - Self.postgresEpoch) * 1_000_000).rounded()
        Int64(exactly: micros).map { $0.appendBigEndian(to: &bytes) } ?? Int64(0).appendBigEndian(to: &bytes)
    }

    /// 2000-01-01 00:00 UTC in seconds since 1970.
    static let postgresEpoch: Double = 946_684_800
}

extension Data: PostgresArrayElement {
    public static var postgresType: UInt32 { 17 }  // bytea
    public static var postgresArrayType: UInt32 { 1001 }
    public func encode(into bytes: inout [UInt8]) { bytes.append(contentsOf: self) }
}

extension Array: PostgresEncodable where Element: PostgresArrayElement {
    public static var postgresType: UInt32 { Element.postgresArrayType }

    /// A one-dimensional array of non-null elements: PostgreSQL's `array_send` layout.
    public func encode(into bytes: inout [UInt8]) {
        // An empty array has no dimension (array_recv refuses a dimension of length 0).
        Int32(isEmpty ? 0 : 1).appendBigEndian(to: &bytes)
        Int32(0).appendBigEndian(to: &bytes)  // no NULL in it
        Int32(bitPattern: Element.postgresType).appendBigEndian(to: &bytes)
        guard !isEmpty else { return }
        Int32(clamping: count).appendBigEndian(to: &bytes)
        Int32(1).appendBigEndian(to: &bytes)  // lower bound
        for element in self {
            let lengthAt = bytes.count
            Int32(0).appendBigEndian(to: &bytes)
            element.encode(into: &bytes)
            let length = Int32(clamping: bytes.count - lengthAt - 4).bigEndian
            Swift.withUnsafeBytes(of: length) { bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0) }
        }
    }
}
