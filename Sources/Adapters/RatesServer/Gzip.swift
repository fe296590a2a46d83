import CZlib
import Foundation

/// gzip decompression with zlib.
enum Gzip {
    static func decompress(_ data: Data) -> Data? {
        var stream = z_stream()
        // 15 + 16: a gzip header, not a zlib one.
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            return nil
        }
        defer { inflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let status: Int32 = data.withUnsafeBytes { raw -> Int32 in
            guard let base = raw.baseAddress else { return Z_DATA_ERROR }
            stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
            stream.avail_in = UInt32(raw.count)
            var result: Int32 = Z_OK
            while result == Z_OK {
                result = chunk.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = UInt32(buffer.count)
                    let code = inflate(&stream, Z_NO_FLUSH)
                    if let produced = buffer.baseAddress {
                        output.append(produced, count: buffer.count - Int(stream.avail_out))
                    }
                    return code
                }
            }
            return result
        }
        return status == Z_STREAM_END ? output : nil
    }
}
