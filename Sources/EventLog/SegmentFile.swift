#if canImport(Glibc)
    import Glibc
#endif

/// Names, header and discovery of segment files.
///
/// A segment is `<first position, 20 digits>.seg`; its sparse index is the same name with
/// `.idx`. Its header starts with the magic `BRLOGSEG` and the log format's version, 1, which
/// has had two header layouts, told apart by where the header's checksum holds:
///
/// The **linked** layout, 40 bytes, which Bureau has written since 0ffe744:
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
///
/// The **first** layout, 32 bytes, which the builds before 0ffe744 wrote (version 1 too: the
/// version was not raised when the link came, so the checksum's place tells them apart):
///
///     offset  size  field
///          0     8  magic "BRLOGSEG"
///          8     4  format version (1), little-endian
///         12     4  reserved, zero
///         16     8  first position, little-endian
///         24     4  CRC-32 of bytes 0..<24
///         28     4  reserved, zero
///
/// Records follow the header in both (``RecordFormat``, unchanged). Every reader takes both;
/// the writer appends to a segment of either layout and starts every new one linked. A segment
/// of another version is refused, naming it and its version
/// (``EventLogError/unsupportedFormat(segment:version:)``): a later Bureau wrote it.
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

    /// The size of the first layout's header (``SegmentFile``).
    static let firstLayoutHeaderSize = 32

    /// A valid header: its layout, where the records start, and the link back.
    struct Header: Equatable, Sendable {
        enum Layout: Equatable, Sendable {
            /// 40 bytes, with the previous segment's first position.
            case linked(previousFirstPosition: UInt64)
            /// 32 bytes, without a link: written before 0ffe744.
            case first
        }

        let layout: Layout

        /// Where the first record starts.
        var size: Int {
            switch layout {
            case .linked: SegmentFile.headerSize
            case .first: SegmentFile.firstLayoutHeaderSize
            }
        }
    }

    /// Why a header cannot be read.
    enum HeaderProblem: Error, Equatable, CustomStringConvertible {
        /// Not a valid header of version 1: damage, or not a segment at all.
        case damaged(String)
        /// A segment of a version this build does not read: a later Bureau wrote it (or the
        /// version's bytes are damaged, which nothing can tell apart).
        case unsupportedVersion(UInt32)

        var description: String {
            switch self {
            case .damaged(let reason): reason
            case .unsupportedVersion(let version):
                "format version \(version); this Bureau reads version \(SegmentFile.formatVersion)"
            }
        }
    }

    /// Checks a header read from this segment (up to ``headerSize`` bytes from its start: fewer
    /// when the file is shorter), in either layout.
    func header(from bytes: [UInt8]) -> Result<Header, HeaderProblem> {
        let first = SegmentFile.firstLayoutHeaderSize
        guard bytes.count >= first else {
            return .failure(.damaged("the file is \(bytes.count) bytes, shorter than the \(first)-byte header"))
        }
        guard Array(bytes[0..<8]) == SegmentFile.magic else { return .failure(.damaged("wrong magic")) }
        // The version before the checksum: a later version may put its checksum elsewhere. But a
        // header whose checksum holds once its version reads 1 is a version-1 header with its
        // version's bytes damaged (a later Bureau's header would not hold so, but to 1 in 2^32).
        let version = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian }
        guard version == SegmentFile.formatVersion else {
            var asVersion1 = bytes
            withUnsafeBytes(of: SegmentFile.formatVersion.littleEndian) { asVersion1.replaceSubrange(8..<12, with: $0) }
            if case .success = header(from: asVersion1) {
                return .failure(
                    .damaged(
                        "format version \(version) in a header whose checksum holds for version 1: the version is damaged"
                    ))
            }
            return .failure(.unsupportedVersion(version))
        }
        return bytes.withUnsafeBytes { raw -> Result<Header, HeaderProblem> in
            let named = raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian
            let layout: Header.Layout
            func checksum(over count: Int, at offset: Int) -> Bool {
                raw.count >= offset + 8
                    && Checksum.crc32(UnsafeRawBufferPointer(rebasing: raw[0..<count]))
                        == raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian
                    // Outside the checksum: checked here, so that no byte of a segment can change unnoticed.
                    && raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) == 0
            }
            if checksum(over: 32, at: 32) {
                layout = .linked(
                    previousFirstPosition: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self).littleEndian)
            } else if checksum(over: 24, at: 24) {
                layout = .first
            } else if bytes.count < SegmentFile.headerSize {
                // A linked header cut short.
                return .failure(
                    .damaged(
                        "the file is \(bytes.count) bytes, shorter than the \(SegmentFile.headerSize)-byte header"))
            } else {
                return .failure(.damaged("header checksum mismatch"))
            }
            guard named == firstPosition else {
                return .failure(
                    .damaged("the header says it starts at position \(named), the name says \(firstPosition)"))
            }
            return .success(Header(layout: layout))
        }
    }

    /// Reads and checks the header of this segment, open as `file`.
    func readHeader(from file: PosixFile) throws -> Header {
        switch header(from: try file.read(count: SegmentFile.headerSize, at: 0)) {
        case .success(let header): return header
        case .failure(.unsupportedVersion(let version)):
            throw EventLogError.unsupportedFormat(segment: path, version: version)
        case .failure(.damaged(let reason)):
            throw EventLogError.badSegmentHeader(segment: path, reason: reason)
        }
    }

    /// Reads and checks this segment's header; returns the first position of the segment before
    /// it (0 for the first). A segment of the first layout has no link: the directory is listed.
    func previousFirstPosition(fileSystem: any FileSystem) throws -> UInt64 {
        let header = try readHeader(from: try PosixFile(path: path, flags: O_RDONLY, fileSystem: fileSystem))
        switch header.layout {
        case .linked(let previous): return previous
        case .first:
            return try SegmentFile.list(in: directory, fileSystem: fileSystem).last { $0 < self }?.firstPosition ?? 0
        }
    }
}
