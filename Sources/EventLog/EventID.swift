import Guards
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The 16-byte identity of an event. Appends are idempotent by it.
///
/// Printed and parsed in the UUID text form (`8-4-4-4-12` hex digits).
public struct EventID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The id whose big-endian bytes these are; nil unless there are exactly 16.
    public init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 16 else { return nil }
        self.init(
            high: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
            low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }

    /// The id whose big-endian bytes these are; nil unless there are exactly 16.
    public init?(bytes: some ContiguousBytes) {
        guard let id = bytes.withUnsafeBytes({ EventID(bytes: $0) }) else { return nil }
        self = id
    }

    /// Parses the UUID text form; nil if it is not 32 hex digits with optional dashes in the usual places.
    public init?(_ text: String) {
        let hex = Array(text.utf8.lazy.filter { $0 != UInt8(ascii: "-") })
        guard hex.count == 32, text.utf8.count == 32 || text.utf8.count == 36,
            let high = Hexadecimal.value(hex[0..<16]), let low = Hexadecimal.value(hex[16..<32])
        else { return nil }
        self.init(high: high, low: low)
    }

    /// A random (version 4) id.
    ///
    /// Drawn from a fast generator seeded once per process from the system's, so that a busy
    /// producer does not make a system call per id; 122 random bits keep ids unique across
    /// processes.
    public static func random() -> EventID {
        fastGenerator.withLock { random(using: &$0) }
    }

    private static let fastGenerator = Mutex(Xoshiro256(seededBy: SystemRandomNumberGenerator()))

    /// A random (version 4) id from the given generator.
    public static func random(using generator: inout some RandomNumberGenerator) -> EventID {
        let high = (generator.next() & ~UInt64(0xF000)) | 0x4000
        let low = (generator.next() & ~(UInt64(0xC) << 60)) | (UInt64(0x8) << 60)
        return EventID(high: high, low: low)
    }

    /// The 16 bytes, big-endian.
    public var bytes: [UInt8] {
        var result = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            result[index] = UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64(index)))
            result[8 + index] = UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64(index)))
        }
        return result
    }

    public var description: String {
        let characters = Array(Hexadecimal.digits(high) + Hexadecimal.digits(low))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }

    /// One 64-bit value into the hasher instead of two: ids are random, so folding loses nothing,
    /// and the bus hashes every id it receives.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(high ^ (low &* 0x9E37_79B9_7F4A_7C15))
    }

    public static func < (lhs: EventID, rhs: EventID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    /// The all-zero id, used where no id applies.
    public static let zero = EventID(high: 0, low: 0)
}
