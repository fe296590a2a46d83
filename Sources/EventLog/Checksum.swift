import CZlib

/// zlib's CRC-32, the checksum of every log record and segment header.
enum Checksum {
    static func crc32(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return UInt32(CZlib.crc32(UInt(crc), base.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count)))
    }
}
