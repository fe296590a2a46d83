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
