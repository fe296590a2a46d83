import BureauSchemas
import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension LogRepair {
    /// Placeholders as the bus would have committed them: an envelope of type
    /// `bureau.system.RecordLost` at the lost position, with the commit time of the record
    /// before it (commit times never go back), from the producer `log-repair`. Its id is the
    /// lost event's, where the damaged record's header still names it, so that a producer's
    /// retry of that event is answered `DUPLICATE` at its position as it was acknowledged;
    /// otherwise it is derived from the position. Repairing twice gives the same records.
    public static func recordLost(_ lost: LostPosition) throws -> (EventID, Data) {
        var payload = Bureau_System_RecordLost()
        payload.reason = lost.reason
        payload.movedTo = lost.movedTo
        let id = lost.id ?? EventID(high: 0x6C6F_7374_2D72_6563, low: lost.position)  // "lost-rec", position
        var envelope = Bureau_Envelope()
        envelope.position = lost.position
        envelope.id = Data(id.bytes)
        envelope.type = Bureau_System_RecordLost.protoMessageName
        envelope.producer.process = "log-repair"
        envelope.payload = try payload.serializedData()
        // The time of the last record before the loss, when it reads: a previous record that is
        // itself damaged gives none, and the RecordLost then carries no commit time.
        if let previous = lost.previous, let before = try? Bureau_Envelope(serializedBytes: previous.body) {
            envelope.commitTime = before.commitTime
        }
        return (id, try envelope.serializedData())
    }
}
