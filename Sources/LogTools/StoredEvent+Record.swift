import Bus
import EventLog

extension StoredEvent {
    /// The event `record` holds, for the tools that read a log; a record that does not decode
    /// is an error naming its position.
    init(decoding record: LogRecord, names: inout TypeNameCache) throws {
        do {
            try self.init(envelopeBytes: record.body, names: &names)
        } catch {
            throw LogToolError("position \(record.position): \(error)")
        }
    }
}
