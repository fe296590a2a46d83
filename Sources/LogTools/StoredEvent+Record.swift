import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension StoredEvent {
    /// The event `record` holds, for the tools that read a log; a record that does not decode
    /// is an error naming its position.
    init(decoding record: LogRecord, names: inout TypeNameCache) throws {
        try self.init(decoding: record.body, at: record.position, names: &names)
    }

    /// The event whose envelope is `body`, the record at `position`; as ``init(decoding:names:)``.
    init(decoding body: Data, at position: UInt64, names: inout TypeNameCache) throws {
        do {
            try self.init(envelopeBytes: body, names: &names)
        } catch {
            throw LogToolError("position \(position): \(error)")
        }
    }
}
