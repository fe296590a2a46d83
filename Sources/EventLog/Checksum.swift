import CZlib

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// zlib's CRC-32: the checksum of every log record, segment header, recovery point and snapshot.
public enum Checksum {
    public static func crc32(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        var crc = UInt(crc)
        var offset = 0
        // zlib takes a 32-bit length; larger inputs go in pieces.
        while offset < bytes.count {
            let length = min(bytes.count - offset, Int(UInt32.max >> 1))
            crc = CZlib.crc32(crc, (base + offset).assumingMemoryBound(to: UInt8.self), UInt32(length))
            offset += length
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    public static func crc32(of bytes: some ContiguousBytes) -> UInt32 {
        bytes.withUnsafeBytes { crc32($0) }
    }
}
