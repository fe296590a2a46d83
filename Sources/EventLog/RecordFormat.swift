#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The on-disk framing of a record.
///
///     offset  size  field
///          0     4  body length, little-endian
///          4     4  CRC-32 of bytes 0..<4, 8..<32 and the body
///          8     8  position, little-endian
///         16    16  event id
///         32     n  body
///
/// The checksum covers the length, so a torn or overwritten tail fails it; a zeroed
/// region fails it too (the CRC-32 of zeros is not zero).
enum RecordFormat {
    static let headerSize = 32
    /// The largest body a record may carry; a length above it marks a damaged record.
    static let maxBodySize = 16 << 20

    static func size(ofBody count: Int) -> Int { headerSize + count }

    /// Appends the framed record to `buffer`.
    static func append(position: UInt64, id: EventID, body: Data, to buffer: inout [UInt8]) {
        body.withUnsafeBytes { append(position: position, id: id, body: $0, to: &buffer) }
    }

    /// Appends the framed record to `buffer`.
    static func append(position: UInt64, id: EventID, body: UnsafeRawBufferPointer, to buffer: inout [UInt8]) {
        let start = buffer.count
        // The header is built aside and appended with the body: nothing is zero-filled first.
        withUnsafeTemporaryAllocation(byteCount: headerSize, alignment: 8) { header in
            header.storeBytes(of: UInt32(body.count).littleEndian, toByteOffset: 0, as: UInt32.self)
            header.storeBytes(of: 0, toByteOffset: 4, as: UInt32.self)
            header.storeBytes(of: position.littleEndian, toByteOffset: 8, as: UInt64.self)
            header.storeBytes(of: id.high.bigEndian, toByteOffset: 16, as: UInt64.self)
            header.storeBytes(of: id.low.bigEndian, toByteOffset: 24, as: UInt64.self)
            buffer.append(contentsOf: UnsafeRawBufferPointer(header))
        }
        buffer.append(contentsOf: body)
        buffer.withUnsafeMutableBytes { all in
            let record = UnsafeMutableRawBufferPointer(rebasing: all[start...])
            let readable = UnsafeRawBufferPointer(record)
            var crc = Checksum.crc32(UnsafeRawBufferPointer(rebasing: readable[0..<4]))
            crc = Checksum.crc32(UnsafeRawBufferPointer(rebasing: readable[8...]), continuing: crc)
            record.storeBytes(of: crc.littleEndian, toByteOffset: 4, as: UInt32.self)
        }
    }

    enum Parsed {
        /// A complete record whose checksum holds.
        case record(LogRecord, size: Int)
        /// Fewer bytes than the header or the body needs: the end of the data, or a torn write.
        case incomplete(needed: Int)
        /// The bytes are not a valid record.
        case invalid(reason: String, position: UInt64?)
    }

    /// A valid record found at the start of some bytes: its header's fields, where its body
    /// lies in those bytes, and its whole size.
    struct Header {
        let position: UInt64
        let id: EventID
        let body: Range<Int>
        let size: Int
    }

    enum Located {
        /// A complete record whose checksum holds.
        case record(Header)
        /// Fewer bytes than the header or the body needs: the end of the data, or a torn write.
        case incomplete(needed: Int)
        /// The bytes are not a valid record.
        case invalid(reason: String, position: UInt64?)
    }

    /// Parses the record at the start of `bytes`.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Parsed {
        switch locate(bytes) {
        case .record(let header):
            let body = Data(UnsafeRawBufferPointer(rebasing: bytes[header.body]))
            return .record(LogRecord(position: header.position, id: header.id, body: body), size: header.size)
        case .incomplete(let needed):
            return .incomplete(needed: needed)
        case .invalid(let reason, let position):
            return .invalid(reason: reason, position: position)
        }
    }

    /// Checks the record at the start of `bytes` without copying its body.
    static func locate(_ bytes: UnsafeRawBufferPointer) -> Located {
        guard bytes.count >= headerSize else { return .incomplete(needed: headerSize) }
        let length = Int(bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian)
        let stored = bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
        let position = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
        guard length <= maxBodySize else {
            return .invalid(reason: "length \(length) is over the limit of \(maxBodySize)", position: nil)
        }
        let total = headerSize + length
        guard bytes.count >= total else { return .incomplete(needed: total) }
        var crc = Checksum.crc32(UnsafeRawBufferPointer(rebasing: bytes[0..<4]))
        crc = Checksum.crc32(UnsafeRawBufferPointer(rebasing: bytes[8..<total]), continuing: crc)
        guard crc == stored else {
            return .invalid(reason: "checksum mismatch", position: nil)
        }
        guard let id = EventID(bytes: UnsafeRawBufferPointer(rebasing: bytes[16..<32])) else {
            return .invalid(reason: "bad id", position: position)
        }
        return .record(Header(position: position, id: id, body: headerSize..<total, size: total))
    }
}
