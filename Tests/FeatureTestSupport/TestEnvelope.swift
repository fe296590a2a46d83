import BureauSchemas
import Bus
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An envelope's bytes as a producer sends them, for tests of the sequencer and the wire: a
/// random id, a test type and a one-byte payload, unless `configure` says otherwise.
public enum TestEnvelope {
    public static func bytes(
        id: EventID? = .random(), type: String? = "bureau.test.Happened",
        configure: (inout Bureau_Envelope) -> Void = { _ in }
    ) -> Data {
        var envelope = Bureau_Envelope()
        if let id { envelope.id = Data(id.bytes) }
        if let type { envelope.type = type }
        envelope.payload = Data("x".utf8)
        configure(&envelope)
        return (try? envelope.serializedData()) ?? Data()
    }
}
