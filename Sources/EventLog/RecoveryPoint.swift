#if canImport(Glibc)
    import Glibc
#endif

/// The last position the log's writer acknowledged, and the segment that holds it: the file
/// `recovery-point` in the log directory (Kafka's recovery-point checkpoint).
///
/// The writer rewrites it in place after every batch it has made durable (as its durability
/// policy says) and before the batch is acknowledged, so whatever kills the writer, every
/// acknowledged position is at or below it. That is what tells damage from a torn write:
/// a bad record at or below the recovery point held an acknowledged event, and the log
/// refuses to start rather than cut it; beyond it, only a write that was never acknowledged
/// can be torn. It also names the newest segment, so opening the log need not list the
/// directory.
///
///     offset  size  field
///          0     8  magic "BRRECPT1"
///          8     8  acknowledged position, little-endian
///         16     8  first position of the segment that holds it (the newest then)
///         24     4  CRC-32 of bytes 0..<24
///         28     4  reserved, zero
struct RecoveryPoint: Equatable, Sendable {
    static let fileName = "recovery-point"
    static let size = 32
    static let magic = Array("BRRECPT1".utf8)

    /// Every position at or below it was acknowledged.
    var acknowledged: UInt64
    /// The segment holding position `acknowledged` (or the segment that comes next, if it
    /// begins right after it).
    var segment: UInt64

    static func path(in directory: String) -> String { directory + "/" + fileName }

    var bytes: [UInt8] {
        var bytes = RecoveryPoint.magic
        bytes.appendLittleEndian(acknowledged)
        bytes.appendLittleEndian(segment)
        let crc = bytes.withUnsafeBytes { Checksum.crc32($0) }
        bytes.appendLittleEndian(crc)
        bytes.appendLittleEndian(UInt32(0))
        return bytes
    }

    /// What reading the file found.
    enum Reading: Equatable {
        case missing
        case valid(RecoveryPoint)
        /// The file is there but not valid: the reason.
        case damaged(String)
    }

    static func decode(_ bytes: [UInt8]) -> Reading {
        // Created but never written: the writer died before its first record.
        if bytes.isEmpty { return .missing }
        guard bytes.count == size else { return .damaged("it is \(bytes.count) bytes, not \(size)") }
        guard Array(bytes[0..<8]) == magic else { return .damaged("wrong magic") }
        return bytes.withUnsafeBytes { raw in
            let stored = raw.loadUnaligned(fromByteOffset: 24, as: UInt32.self).littleEndian
            guard Checksum.crc32(UnsafeRawBufferPointer(rebasing: raw[0..<24])) == stored else {
                return .damaged("checksum mismatch")
            }
            guard raw.loadUnaligned(fromByteOffset: 28, as: UInt32.self) == 0 else {
                return .damaged("reserved bytes are not zero")
            }
            return .valid(
                RecoveryPoint(
                    acknowledged: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian,
                    segment: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian))
        }
    }

    /// Reads the recovery point of the log in `directory`.
    ///
    /// A reader racing the writer's in-place rewrite may see a mix of two versions; it reads
    /// again before it calls the file damaged.
    static func read(in directory: String, fileSystem: any FileSystem) -> Reading {
        let path = path(in: directory)
        guard fileSystem.exists(path) else { return .missing }
        var reading = Reading.missing
        for _ in 0..<3 {
            let bytes: [UInt8]
            do {
                bytes = try PosixFile.readAll(path, fileSystem: fileSystem, limit: 4096)
            } catch {
                return fileSystem.exists(path) ? .damaged("it cannot be read: \(error)") : .missing
            }
            reading = decode(bytes)
            if case .valid = reading { return reading }
        }
        return reading
    }
}
