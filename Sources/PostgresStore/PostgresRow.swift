import CLibpq

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One row of an answer, its columns in PostgreSQL's binary format, each read as the type the
/// caller expects: a column of another type, or NULL where a value is needed, is an error that
/// names the column (a database altered by hand), never a value made up.
public struct PostgresRow: Sendable {
    struct Column: Sendable {
        var name: String
        var type: UInt32
        /// Copied once out of libpq's result, and handed out as it is (a log record's body).
        var bytes: Data?
    }

    let columns: [Column]

    /// Why a column could not be read as asked.
    public struct DecodingError: Error, CustomStringConvertible {
        public var description: String
    }

    static func rows(of result: OpaquePointer) -> [PostgresRow] {
        let fields = Int(PQnfields(result))
        let names = (0..<fields).map { String(cString: PQfname(result, Int32($0))) }
        let types = (0..<fields).map { UInt32(PQftype(result, Int32($0))) }
        return (0..<Int(PQntuples(result))).map { row in
            PostgresRow(
                columns: (0..<fields).map { field in
                    let (r, f) = (Int32(row), Int32(field))
                    guard PQgetisnull(result, r, f) == 0, let value = PQgetvalue(result, r, f) else {
                        return Column(name: names[field], type: types[field], bytes: nil)
                    }
                    let bytes = Data(bytes: value, count: Int(PQgetlength(result, r, f)))
                    return Column(name: names[field], type: types[field], bytes: bytes)
                })
        }
    }

    private func column(_ index: Int, _ types: Set<UInt32>, _ what: String) throws(DecodingError) -> Column {
        guard columns.indices.contains(index) else {
            throw DecodingError(description: "the answer has \(columns.count) column(s), not \(index + 1)")
        }
        let column = columns[index]
        guard types.contains(column.type) else {
            throw DecodingError(description: "column \(column.name) is of type OID \(column.type), not \(what)")
        }
        return column
    }

    private func value(_ index: Int, _ types: Set<UInt32>, _ what: String) throws(DecodingError) -> Data {
        guard let bytes = try column(index, types, what).bytes else {
            throw DecodingError(description: "column \(columns[index].name) is NULL where \(what) is needed")
        }
        return bytes
    }

    /// An integer column (smallint, integer or bigint).
    public func integer(_ index: Int) throws(DecodingError) -> Int64 {
        let bytes = try value(index, [21, 23, 20], "an integer")
        guard [2, 4, 8].contains(bytes.count) else {
            throw DecodingError(description: "column \(columns[index].name) holds \(bytes.count) bytes, not an integer")
        }
        // Big-endian, sign-extended from its width.
        let unsigned = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let shift = UInt64(64 - 8 * bytes.count)
        return Int64(bitPattern: unsigned << shift) >> shift
    }

    /// A log position or a count: an integer column that is not negative.
    public func position(_ index: Int) throws(DecodingError) -> UInt64 {
        let value = try integer(index)
        guard let position = UInt64(exactly: value) else {
            throw DecodingError(description: "column \(columns[index].name) holds \(value), not a position (0 or more)")
        }
        return position
    }

    public func bool(_ index: Int) throws(DecodingError) -> Bool {
        let bytes = try value(index, [16], "a boolean")
        guard bytes.count == 1 else { throw DecodingError(description: "a boolean of \(bytes.count) bytes") }
        return bytes.first != 0
    }

    public func uuid(_ index: Int) throws(DecodingError) -> UUID {
        let data = try value(index, [2950], "a uuid")
        guard data.count == 16 else { throw DecodingError(description: "a uuid of \(data.count) bytes") }
        let bytes = Array(data)
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// A bytea column; nil when it is NULL.
    public func optionalBytes(_ index: Int) throws(DecodingError) -> Data? {
        try column(index, [17], "bytea").bytes
    }

    /// A bytea column.
    public func bytes(_ index: Int) throws(DecodingError) -> Data {
        try value(index, [17], "bytea")
    }
}
