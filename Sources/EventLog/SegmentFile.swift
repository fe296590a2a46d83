#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Names, header and discovery of segment files.
///
/// A segment is `<first position, 20 digits>.seg`; its sparse index is the same name with
/// `.idx`. The header is 32 bytes:
///
///     offset  size  field
///          0     8  magic "BRLOGSEG"
///          8     4  format version (1), little-endian
///         12     4  reserved, zero
///         16     8  first position, little-endian
///         24     4  CRC-32 of bytes 0..<24
///         28     4  reserved, zero
struct SegmentFile: Comparable, Sendable {
    static let headerSize = 32
    static let magic = Array("BRLOGSEG".utf8)
    static let formatVersion: UInt32 = 1

    let directory: String
    let firstPosition: UInt64

    var name: String { SegmentFile.baseName(firstPosition) + ".seg" }
    var path: String { directory + "/" + name }
    var indexPath: String { directory + "/" + SegmentFile.baseName(firstPosition) + ".idx" }

    static func baseName(_ position: UInt64) -> String {
        let digits = String(position)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    static func < (lhs: SegmentFile, rhs: SegmentFile) -> Bool { lhs.firstPosition < rhs.firstPosition }

    /// The segments in `directory`, oldest first.
    static func list(in directory: String) throws -> [SegmentFile] {
        guard let handle = opendir(directory) else {
            throw EventLogError.io(operation: "opendir", path: directory, errno: errno)
        }
        defer { closedir(handle) }
        var segments: [SegmentFile] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard name.hasSuffix(".seg"), name.count == 24, let first = UInt64(name.prefix(20)) else { continue }
            segments.append(SegmentFile(directory: directory, firstPosition: first))
        }
        return segments.sorted()
    }

    static func header(firstPosition: UInt64) -> [UInt8] {
        var bytes = magic
        bytes.appendLittleEndian(formatVersion)
        bytes.appendLittleEndian(UInt32(0))
        bytes.appendLittleEndian(firstPosition)
        let crc = bytes.withUnsafeBytes { Checksum.crc32($0) }
        bytes.appendLittleEndian(crc)
        bytes.appendLittleEndian(UInt32(0))
        return bytes
    }

    /// Checks a header read from this segment; returns why it is not valid, or nil.
    func problem(withHeader bytes: [UInt8]) -> String? {
        guard bytes.count >= SegmentFile.headerSize else {
            return "the file is \(bytes.count) bytes, shorter than the \(SegmentFile.headerSize)-byte header"
        }
        guard Array(bytes[0..<8]) == SegmentFile.magic else { return "wrong magic" }
        return bytes.withUnsafeBytes { raw -> String? in
            let version = raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian
            let first = raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian
            let stored = raw.loadUnaligned(fromByteOffset: 24, as: UInt32.self).littleEndian
            guard Checksum.crc32(UnsafeRawBufferPointer(rebasing: raw[0..<24])) == stored else {
                return "header checksum mismatch"
            }
            guard version == SegmentFile.formatVersion else {
                return "format version \(version); this Bureau reads version \(SegmentFile.formatVersion)"
            }
            guard first == firstPosition else {
                return "the header says it starts at position \(first), the name says \(firstPosition)"
            }
            return nil
        }
    }
}

/// The sparse index of a segment: (position, byte offset) pairs, 16 bytes each, little-endian.
///
/// An entry is written for the first record at or after every `interval` bytes. It is a hint:
/// readers check the record an entry points to before trusting it, so the index needs no fsync.
struct SparseIndex {
    struct Entry: Equatable {
        let position: UInt64
        let offset: Int64
    }

    static let entrySize = 16

    static func read(_ path: String) -> [Entry] {
        guard let bytes = try? PosixFile.readAll(path) else { return [] }
        let count = bytes.count / entrySize
        return bytes.withUnsafeBytes { raw in
            (0..<count).map { index in
                Entry(
                    position: raw.loadUnaligned(fromByteOffset: index * entrySize, as: UInt64.self).littleEndian,
                    offset: Int64(
                        raw.loadUnaligned(fromByteOffset: index * entrySize + 8, as: UInt64.self).littleEndian)
                )
            }
        }
    }

    static func encode(_ entry: Entry, into buffer: inout [UInt8]) {
        buffer.appendLittleEndian(entry.position)
        buffer.appendLittleEndian(UInt64(entry.offset))
    }

    /// The last entry at or before `position`, among entries sorted by position.
    static func floor(_ entries: [Entry], _ position: UInt64) -> Entry? {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].position <= position { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : entries[low - 1]
    }
}
