#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One event as the log stores it: its position, its id and its bytes (an encoded envelope).
public struct LogRecord: Sendable, Hashable {
    public let position: UInt64
    public let id: EventID
    public let body: Data

    /// The largest body any log stores: 16 MiB.
    public static let maxBodyBytes = RecordFormat.maxBodySize

    public init(position: UInt64, id: EventID, body: Data) {
        self.position = position
        self.id = id
        self.body = body
    }
}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
