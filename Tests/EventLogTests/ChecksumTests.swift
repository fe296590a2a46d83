import CZlib
import EventLog
import TestSupport
import Testing

/// The log's checksum is zlib's CRC-32, whoever computes it: logs written before ISA-L took
/// over are read with the same values.
struct ChecksumTests {
    @Test func theCheckValueIsCRC32s() {
        #expect(Checksum.crc32(of: Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(Checksum.crc32(of: [UInt8]()) == 0)
    }

    @Test func everyLengthAndAlignmentGivesZlibsValueAndContinuesAsZlibDoes() {
        var generator = TestSeed.generator(for: "checksum: the bytes")
        let bytes = (0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.withUnsafeBytes { all in
            for length in Array(0...300) + [1000, 4095, 4096, 8000] {
                for start in [0, 1, 3, 7] where start + length <= all.count {
                    let slice = UnsafeRawBufferPointer(rebasing: all[start..<start + length])
                    let zlib = UInt32(
                        truncatingIfNeeded: CZlib.crc32(
                            0, slice.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32(length)))
                    #expect(Checksum.crc32(slice) == zlib, "length \(length) at \(start)")
                    let half = length / 2
                    let continued = Checksum.crc32(
                        UnsafeRawBufferPointer(rebasing: slice[half...]),
                        continuing: Checksum.crc32(UnsafeRawBufferPointer(rebasing: slice[..<half])))
                    #expect(continued == zlib, "length \(length) at \(start), in two pieces")
                }
            }
        }
    }
}
