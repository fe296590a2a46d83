import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension UUID {
    /// The same 16 bytes as `id`, so that PostgreSQL's `uuid` column holds the event id as it is.
    init(_ id: EventID) {
        let b = id.bytes
        self.init(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
    }

    /// The all-zero UUID, which stands for "none" in array parameters (they cannot hold NULL here).
    static let none = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

extension EventID {
    init(_ uuid: UUID) {
        // 16 bytes always make an id.
        self = withUnsafeBytes(of: uuid.uuid) { EventID(bytes: $0) } ?? .zero
    }
}
