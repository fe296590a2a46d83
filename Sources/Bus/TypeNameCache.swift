import BureauSchemas

#if canImport(Glibc)
    import Glibc
#endif

/// The type names a stream of envelopes last used, as strings, so that decoding the next
/// envelope of one of those types shares its name instead of making it again.
///
/// A type name is longer than a small string (`bureau.watchlist.PairAdded`), so making one
/// costs a validation, an allocation and later a free, for every event a subscriber, a replay
/// or a host decodes; a stream has few types, mostly in runs. Keep one per stream and pass it
/// to ``StoredEvent/init(envelopeBytes:names:)``. A name the schemas define is their literal
/// (`SchemaRegistry.knownTypeName`), so the events of any stream share it without counting
/// references.
public struct TypeNameCache: Sendable {
    /// At most this many names are kept; a new one takes the place of the oldest.
    public static let capacity = 16

    private var names: [String] = []
    /// Each name's bytes, compared first by their count: a stream's few types mostly differ in
    /// length, so a lookup compares one name's bytes, and never touches a string's storage.
    private var spellings: [[UInt8]] = []
    /// Where the next new name goes once the cache is full.
    private var oldest = 0
    /// The name found last, tried first: events of one type mostly come together.
    private var last = 0

    public init() {}

    /// The name whose UTF-8 is `bytes`: a kept one if it is there, else a new one, kept.
    public mutating func name(_ bytes: UnsafeRawBufferPointer) -> String {
        if last < spellings.count, Self.equal(spellings[last], bytes) { return names[last] }
        for index in 0..<spellings.count where Self.equal(spellings[index], bytes) {
            last = index
            return names[index]
        }
        let made = String(decoding: bytes, as: UTF8.self)
        // The schemas' immortal copy when there is one (see `SchemaRegistry.knownTypeName`).
        let name = SchemaRegistry.sharedTypeName(made)
        if names.count < Self.capacity {
            last = names.count
            names.append(name)
            spellings.append(Array(bytes))
        } else {
            last = oldest
            names[oldest] = name
            spellings[oldest] = Array(bytes)
            oldest = (oldest + 1) % Self.capacity
        }
        return name
    }

    private static func equal(_ spelling: [UInt8], _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard spelling.count == bytes.count else { return false }
        return spelling.withUnsafeBytes { stored in
            guard let left = stored.baseAddress, let right = bytes.baseAddress else { return true }
            return memcmp(left, right, bytes.count) == 0
        }
    }
}
