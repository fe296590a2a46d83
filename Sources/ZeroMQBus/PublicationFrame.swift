#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The second frame of a `bureau/2` publication, `[type name][this frame]`: committed events
/// of that one type, in position order, each as
///
///     position u64 | previous position in its package u64 | envelope length u32 | envelope
///
/// (little-endian). A length of 0 is a notice: the event is too large for the live stream and
/// is read from the log (no envelope is ever empty).
public enum PublicationFrame {
    /// The bytes before each envelope.
    public static let entryHeaderBytes = 20

    /// One event of a frame; its envelope is `frame[envelope]`, empty for a notice.
    public struct Entry: Equatable, Sendable {
        public let position: UInt64
        public let previousInPackage: UInt64
        public let envelope: Range<Int>
    }

    /// Appends one event to a frame being built.
    public static func append(
        position: UInt64, previousInPackage: UInt64, envelope: some ContiguousBytes, notice: Bool,
        to frame: inout [UInt8]
    ) {
        withUnsafeBytes(of: position.littleEndian) { frame.append(contentsOf: $0) }
        withUnsafeBytes(of: previousInPackage.littleEndian) { frame.append(contentsOf: $0) }
        envelope.withUnsafeBytes { envelope in
            let length = notice ? 0 : envelope.count
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: length).littleEndian) { frame.append(contentsOf: $0) }
            if !notice { frame.append(contentsOf: envelope) }
        }
    }

    /// The entries of a frame, with ranges relative to its first byte; nil if it is empty or
    /// any entry runs past its end (a frame that is not a publication).
    public static func entries(_ frame: UnsafeRawBufferPointer) -> [Entry]? {
        var entries: [Entry] = []
        var offset = 0
        while offset < frame.count {
            guard frame.count - offset >= entryHeaderBytes else { return nil }
            let position = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let previous = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
            let length = Int(UInt32(littleEndian: frame.loadUnaligned(fromByteOffset: offset + 16, as: UInt32.self)))
            let start = offset + entryHeaderBytes
            guard length <= frame.count - start else { return nil }
            entries.append(Entry(position: position, previousInPackage: previous, envelope: start..<start + length))
            offset = start + length
        }
        return entries.isEmpty ? nil : entries
    }
}
