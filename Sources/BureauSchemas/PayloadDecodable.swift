import SwiftProtobuf

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A message of Bureau's schemas, which ``PayloadDecoder`` decodes with code compiled for its
/// own type. Every generated message conforms: `tools/generate-schemas` writes the
/// conformances.
///
/// The generated `decodeMessage(decoder:)` is generic over the decoder and not inlinable, so
/// a caller in another module, even one compiled for the message's type, called it
/// unspecialized: every field went to ``PayloadDecoder`` through a witness table, and that was
/// most of the decoding's time. A conformance made here has the compiler specialize the
/// decoding for that message, in this module, with the decoder's methods inlined.
public protocol PayloadDecodable: SwiftProtobuf.Message {
    /// The message `bytes` encode, decoded by ``PayloadDecoder``; nil when only swift-protobuf
    /// can tell. Do not implement it: the default, compiled for each conforming type, is the
    /// point of the protocol.
    static func decodedByPayloadDecoder(_ bytes: UnsafeRawBufferPointer) -> Self?
}

extension PayloadDecodable {
    public static func decodedByPayloadDecoder(_ bytes: UnsafeRawBufferPointer) -> Self? {
        PayloadDecoder.decode(Self.self, from: bytes)
    }

    /// The message `bytes` encode: the value `init(serializedBytes:)` makes, or its error,
    /// decoded by ``PayloadDecoder`` when it can (every event of Bureau's schemas as written),
    /// and by swift-protobuf when it cannot. For decoding events' payloads on hot paths.
    @inlinable
    public init(payloadBytes bytes: Data) throws {
        if let decoded = bytes.withUnsafeBytes({ Self.decodedByPayloadDecoder($0) }) {
            self = decoded
        } else {
            try self.init(serializedBytes: bytes)
        }
    }
}
