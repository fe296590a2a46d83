#if canImport(Glibc)
    import Glibc
#endif

/// Names, header and discovery of segment files.
///
/// A segment is `<first position, 20 digits>.seg`; its sparse index is the same name with
/// `.idx`. The header is 40 bytes:
///
///     offset  size  field
///          0     8  magic "BRLOGSEG"
///          8     4  format version (1), little-endian
///         12     4  reserved, zero
///         16     8  first position, little-endian
///         24     8  first position of the previous segment (0 for the first), little-endian
///         32     4  CRC-32 of bytes 0..<32
///         36     4  reserved, zero
///
/// The link to the previous segment lets the writer walk back from the newest segment as far
/// as it needs without listing the directory.
struct SegmentFile: Comparable, Sendable {
    static let headerSize = 40
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
    static func list(in directory: String, fileSystem: any FileSystem) throws -> [SegmentFile] {
        let names: [String]
        do {
            names = try fileSystem.list(directory)
        } catch {
            throw EventLogError.io(operation: "opendir", path: directory, errno: error.code)
        }
        var segments: [SegmentFile] = []
        for name in names {
            guard name.hasSuffix(".seg"), name.utf8.count == 24, let first = UInt64(name.prefix(20)), first > 0 else {
                continue
            }
            segments.append(SegmentFile(directory: directory, firstPosition: first))
        }
        return segments.sorted()
    }

    static func header(firstPosition: UInt64, previousFirstPosition: UInt64) -> [UInt8] {
        var bytes = magic
        bytes.appendLittleEndian(formatVersion)
        bytes.appendLittleEndian(UInt32(0))
        bytes.appendLittleEndian(firstPosition)
        bytes.appendLittleEndian(previousFirstPosition)
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
            let stored = raw.loadUnaligned(fromByteOffset: 32, as: UInt32.self).littleEndian
            guard Checksum.crc32(UnsafeRawBufferPointer(rebasing: raw[0..<32])) == stored else {
                return "header checksum mismatch"
            }
            guard version == SegmentFile.formatVersion else {
                return "format version \(version); this Bureau reads version \(SegmentFile.formatVersion)"
            }
            guard first == firstPosition else {
                return "the header says it starts at position \(first), the name says \(firstPosition)"
            }
            // Outside the checksum: checked here, so that no byte of a segment can change unnoticed.
            guard raw.loadUnaligned(fromByteOffset: 36, as: UInt32.self) == 0 else {
                return "reserved header bytes are not zero"
            }
            return nil
        }
    }

    /// The first position of the segment before this one, from a valid header; 0 for the first.
    static func previousFirstPosition(inHeader bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 24, as: UInt64.self)) }
    }

    /// Reads and checks this segment's header; returns the first position of the segment before it.
    func previousFirstPosition(fileSystem: any FileSystem) throws -> UInt64 {
        let header = try PosixFile(path: path, flags: O_RDONLY, fileSystem: fileSystem)
            .read(count: SegmentFile.headerSize, at: 0)
        if let problem = problem(withHeader: header) {
            throw EventLogError.badSegmentHeader(segment: path, reason: problem)
        }
        return SegmentFile.previousFirstPosition(inHeader: header)
    }
}

/// The sparse index of a segment: (position, byte offset) pairs, 16 bytes each, little-endian.
///
/// An entry is written for the first record at or after every `interval` bytes. It is a hint:
/// readers check the record an entry points to before trusting it, so the index needs no
/// fsync, and opening the log rebuilds the newest segment's index when it does not match.
struct SparseIndex {
    struct Entry: Equatable {
        let position: UInt64
        let offset: Int64
    }

    static let entrySize = 16

    /// The entries of an index file, as far as it can be read; a damaged file gives entries
    /// that readers reject when they check them, never a trap.
    static func read(_ path: String, fileSystem: any FileSystem) -> [Entry] {
        guard let bytes = try? PosixFile.readAll(path, fileSystem: fileSystem, limit: 16 << 20) else { return [] }
        return decode(bytes)
    }

    static func decode(_ bytes: [UInt8]) -> [Entry] {
        let count = bytes.count / entrySize
        return bytes.withUnsafeBytes { raw in
            (0..<count).map { index in
                Entry(
                    position: raw.loadUnaligned(fromByteOffset: index * entrySize, as: UInt64.self).littleEndian,
                    offset: Int64(
                        bitPattern: raw.loadUnaligned(fromByteOffset: index * entrySize + 8, as: UInt64.self)
                            .littleEndian)
                )
            }
        }
    }

    static func encode(_ entry: Entry, into buffer: inout [UInt8]) {
        buffer.appendLittleEndian(entry.position)
        buffer.appendLittleEndian(UInt64(bitPattern: entry.offset))
    }

    /// Whether every entry points at the start of a valid record with the entry's position, in
    /// increasing order: an index written with another interval is valid too.
    static func matches(_ entries: [Entry], segment: SegmentFile, file: PosixFile) throws -> Bool {
        var previous: Entry?
        for entry in entries {
            if let previous, entry.position <= previous.position || entry.offset <= previous.offset { return false }
            guard entry.offset >= Int64(SegmentFile.headerSize), entry.position >= segment.firstPosition,
                case .record(let record, _) = try SegmentScanner.readRecord(file, at: entry.offset),
                record.position == entry.position
            else { return false }
            previous = entry
        }
        return true
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
