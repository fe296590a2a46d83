#if canImport(Glibc)
    import Glibc
#endif

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

    /// The entries of an index file: none when there is no file; a damaged file gives entries
    /// that readers reject when they check them, never a trap.
    ///
    /// Throws when the file is there but cannot be read (its mode, an I/O error, a directory in
    /// its place): unlike a missing index, that is for the caller to say or mend.
    static func read(_ path: String, fileSystem: any FileSystem) throws -> [Entry] {
        do {
            return decode(try PosixFile.readAll(path, fileSystem: fileSystem, limit: 16 << 20))
        } catch EventLogError.io(_, _, ENOENT) {
            return []
        }
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
    static func matches(_ entries: [Entry], segment: SegmentFile, file: PosixFile, recordsStart: Int64) throws -> Bool {
        var previous: Entry?
        for entry in entries {
            if let previous, entry.position <= previous.position || entry.offset <= previous.offset { return false }
            guard entry.offset >= recordsStart, entry.position >= segment.firstPosition,
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
