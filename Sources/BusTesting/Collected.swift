import BureauSchemas
import Bus
import EventLog
import Runtime
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Events read so far, shared by the reading task and the one that waits for it.
final class Collected: Sendable {
    let events = Mutex<[StoredEvent]>([])
}
