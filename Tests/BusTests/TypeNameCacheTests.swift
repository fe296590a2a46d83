import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Testing

struct TypeNameCacheTests {
    /// Envelopes of `types`, in that order, stamped with positions from 1.
    static func envelopes(_ types: [String]) throws -> [Data] {
        try types.enumerated().map { index, type in
            let event = OutgoingEvent(
                type: type, payload: Data(repeating: UInt8(index % 256), count: index % 7), module: "m\(index % 3)")
            return EnvelopeStamp(seconds: 1_700_000_000, nanos: 0)
                .stamped(try event.envelopeBytes(process: "p"), position: UInt64(index + 1))
        }
    }

    @Test func aStreamDecodesWithTheCacheExactlyAsWithout() throws {
        // More types than the cache keeps, names that differ only in their last byte or length,
        // a prefix of another, Unicode, and runs of one type between them.
        var names = (0..<(TypeNameCache.capacity + 9)).map { "bureau.test.Happened\($0)" }
        names += ["bureau.test.Happened", "bureau.test.Happene", "bureau.tëst.Ünïcode", "bureau.a.B", "bureau.a.C"]
        var types: [String] = []
        var random = Xoshiro256(seed: 42)
        for _ in 0..<2_000 {
            let name = names[Int.random(in: 0..<names.count, using: &random)]
            types += Array(repeating: name, count: Int.random(in: 1...4, using: &random))
        }
        var cache = TypeNameCache()
        for envelope in try Self.envelopes(types) {
            let cached = try StoredEvent(envelopeBytes: envelope, names: &cache)
            #expect(cached == (try StoredEvent(envelopeBytes: envelope)))
        }
    }

    @Test func eventsOfOneTypeShareTheirNamesString() throws {
        var cache = TypeNameCache()
        let envelopes = try Self.envelopes(["bureau.watchlist.PairAdded", "bureau.watchlist.PairAdded"])
        let first = try StoredEvent(envelopeBytes: envelopes[0], names: &cache)
        let second = try StoredEvent(envelopeBytes: envelopes[1], names: &cache)
        func storage(_ name: String) -> UnsafeRawPointer? {
            name.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } ?? nil
        }
        #expect(first.type == second.type)
        #expect(storage(first.type) != nil && storage(first.type) == storage(second.type))
    }
}
