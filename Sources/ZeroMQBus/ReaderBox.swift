import BureauSchemas
import Bus
import EventLog
import Logging
import ServiceLifecycle
import ZeroMQ

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Moves a value that is confined to one thread into that thread's closure.
final class ReaderBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
