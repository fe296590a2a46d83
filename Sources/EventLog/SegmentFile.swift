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
/// The link to the previous segment lets the writer start from the newest segment (named in
/// the log's HEAD file) and walk back as far as it needs without listing the directory.
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
            return nil
        }
    }
}

extension SegmentFile {
    /// The first position of the segment before this one, from the header; 0 for the first.
    func previousFirstPosition() throws -> UInt64 {
        let header = try PosixFile(path: path, flags: O_RDONLY).read(count: SegmentFile.headerSize, at: 0)
        if let problem = problem(withHeader: header) {
            throw EventLogError.badSegmentHeader(segment: path, reason: problem)
        }
        return header.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 24, as: UInt64.self)) }
    }

    /// The HEAD file names the newest segment, so that opening the log need not list the directory.
    static func headPath(in directory: String) -> String { directory + "/HEAD" }

    /// The newest segment HEAD names, if HEAD is readable and that segment exists.
    static func newestFromHead(in directory: String) -> SegmentFile? {
        guard let bytes = try? PosixFile.readAll(headPath(in: directory)),
            let first = UInt64(String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self))
        else { return nil }
        let segment = SegmentFile(directory: directory, firstPosition: first)
        return PosixFile.exists(segment.path) ? segment : nil
    }

    /// Points HEAD at a segment, durably: written aside, renamed over, directory synced.
    static func writeHead(_ segment: SegmentFile) throws {
        let path = headPath(in: segment.directory)
        let temporary = path + ".new"
        let file = try PosixFile(path: temporary, flags: O_WRONLY | O_CREAT | O_TRUNC)
        try Array("\(segment.firstPosition)\n".utf8).withUnsafeBytes { try file.write($0, at: 0) }
        try file.dataSync()
        file.close()
        guard rename(temporary, path) == 0 else {
            throw EventLogError.io(operation: "rename", path: temporary, errno: errno)
        }
        try PosixFile.syncDirectory(segment.directory)
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
