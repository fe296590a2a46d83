/// Why the bus rejected one event of a publish request (the request's other events are decided
/// each on its own): what the daemon counts the rejection under (the `reason` of
/// `bureau_bus_publish_outcomes_total`), decided where the rejection is made — the ``Sequencer``
/// for the daemon and the in-memory twin alike, the daemon's ingress loop for a full disk. The
/// strings live here and nowhere else.
///
/// Beside ``BusErrorCode`` (a request refused whole), but not on the wire: a `PublishResult`
/// says a rejection in its `reason` text alone, which a client reads as
/// ``PublishOutcome/rejected(_:)``.
public enum PublishRejectionCode: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The envelope is larger than a bus takes (``BusLimits``).
    case tooLarge = "too-large"
    /// The bytes are not an envelope: the protobuf wire format is broken.
    case malformed
    /// The envelope's id is not 16 bytes, or is all zeros.
    case badID = "bad-id"
    /// The envelope's correlation id is neither 16 bytes nor absent.
    case badCorrelation = "bad-correlation"
    /// The envelope has no type name, or one the bus does not take (``TypeName``).
    case badType = "bad-type"
    /// The envelope sets what the bus assigns: a position or a commit time.
    case busField = "bus-field"
    /// The event was checked, but the log could not store it (a full disk): the producer may
    /// send it again.
    case notStored = "not-stored"

    public var description: String { rawValue }
}
