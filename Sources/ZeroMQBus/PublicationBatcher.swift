import Bus

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns a committed batch's publications into `bureau/2` publication messages: consecutive
/// events of one type share a message (``PublicationFrame``) of at most ``maxFrameBytes``, so a
/// stream of one type costs libzmq and each subscriber one message per few hundred events.
///
/// Keeps the global order: a message holds a run of consecutive positions, so both chains of
/// README's "No silent loss" read a message's events one by one as they read single ones.
struct PublicationBatcher {
    /// The most bytes of entries one message holds (one event larger than it is a notice anyway).
    let maxFrameBytes: Int
    /// Envelopes larger than this go out as notices.
    let maxLiveEnvelopeBytes: Int
    private var type: Sequencer.KnownType?
    private var frame: [UInt8] = []

    init(
        maxFrameBytes: Int = BusLimits.maxPublicationFrameBytes,
        maxLiveEnvelopeBytes: Int = BusLimits.maxLiveEnvelopeBytes
    ) {
        self.maxFrameBytes = maxFrameBytes
        self.maxLiveEnvelopeBytes = maxLiveEnvelopeBytes
        frame.reserveCapacity(maxFrameBytes)
    }

    /// Adds one committed event; `send` gets a finished message (type, frame) when this event
    /// cannot join the one being built.
    mutating func add(
        type: Sequencer.KnownType, position: UInt64, previousInPackage: UInt64, body: UnsafeRawBufferPointer,
        send: (Data, [UInt8]) -> Void
    ) {
        let notice = body.count > maxLiveEnvelopeBytes
        let size = PublicationFrame.entryHeaderBytes + (notice ? 0 : body.count)
        let sameType = self.type?.sharesTopic(with: type) ?? false
        if !frame.isEmpty && (!sameType || frame.count + size > maxFrameBytes) {
            flush(send: send)
        }
        if frame.isEmpty { self.type = type }
        PublicationFrame.append(
            position: position, previousInPackage: previousInPackage, envelope: body, notice: notice, to: &frame)
    }

    /// Sends the message being built, if any.
    mutating func flush(send: (Data, [UInt8]) -> Void) {
        guard !frame.isEmpty, let type else { return }
        send(type.topic, frame)
        frame.removeAll(keepingCapacity: true)
    }
}
